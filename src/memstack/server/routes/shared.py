"""``/v1/shared``: reactive shared memory, with long-poll waits and compare-and-set versions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from ...errors import EntryNotFound
from ...shared import SharedMemory
from ..app import TenantMemory
from ._common import ERRORS

router = APIRouter(prefix="/v1/shared", tags=["shared memory"], responses=ERRORS)


class ValueIn(BaseModel):
    value: Any = Field(description="Any JSON value.")
    version: int | None = Field(
        None, ge=0, description="Compare-and-set: write only if the key is at this version (0: absent)."
    )
    subject: str | None = Field(None, max_length=256, description="The end user this is about (for forget).")


class KeyValue(BaseModel):
    name: str
    key: str
    value: Any
    version: int


class Snapshot(BaseModel):
    name: str
    snapshot: dict[str, Any]


class Deleted(BaseModel):
    name: str
    key: str
    previous: Any


def _open(mem: Any, name: str) -> SharedMemory:
    return SharedMemory(mem.engine, name, enable_cache=False)


@router.get("/{name}", response_model=Snapshot, summary="The whole memory (to_dict)")
def snapshot(mem: TenantMemory, name: str) -> Snapshot:
    with _open(mem, name) as shared:
        return Snapshot(name=name, snapshot=shared.to_dict())


@router.get("/{name}/keys/{key}", response_model=KeyValue, summary="Read a key; wait=S long-polls for it")
async def get(
    request: Request,
    mem: TenantMemory,
    name: str,
    key: str,
    wait: Annotated[float, Query(ge=0, le=60, description="Seconds to wait for a missing key.")] = 0,
) -> KeyValue:
    cap = float(request.app.state.settings.max_wait_seconds)
    with _open(mem, name) as shared:
        if wait > 0:
            await shared.aget(key, wait=min(wait, cap))
        elif key not in shared:
            raise EntryNotFound(f"shared memory {name!r} has no key {key!r}")
        value, version = shared.get_with_version(key)
        return KeyValue(name=name, key=key, value=value, version=version)


@router.put("/{name}/keys/{key}", response_model=KeyValue, summary="Write a key (optionally compare-and-set)")
def put(mem: TenantMemory, name: str, key: str, body: ValueIn) -> KeyValue:
    with _open(mem, name) as shared:
        if body.version is not None:
            version = shared.set_if(key, body.value, version=body.version, subject=body.subject)
        else:
            shared.set(key, body.value, subject=body.subject)
            version = shared.version(key)
        return KeyValue(name=name, key=key, value=body.value, version=version)


@router.delete("/{name}/keys/{key}", response_model=Deleted, summary="Delete a key")
def delete(mem: TenantMemory, name: str, key: str) -> Deleted:
    with _open(mem, name) as shared:
        if key not in shared:
            raise EntryNotFound(f"shared memory {name!r} has no key {key!r}")
        return Deleted(name=name, key=key, previous=shared.delete(key))
