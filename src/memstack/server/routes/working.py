"""``/v1/working``: working memory (path keys, TTLs, a cap per namespace) of the caller's tenant."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ...errors import EntryNotFound
from ...wire import working_json
from ...working import WorkingEntry, WorkingMemory
from ..app import TenantMemory
from ._common import ERRORS

router = APIRouter(prefix="/v1/working", tags=["working memory"], responses=ERRORS)

Namespace = Annotated[str, Query(max_length=300, description="Own namespace, e.g. session/abc.")]


class EntryIn(BaseModel):
    value: Any = Field(description="Any JSON value.")
    ttl_seconds: float | None = Field(None, gt=0, description="Default: 300 s.")
    category: str | None = None
    tags: list[str] | None = None
    subject: str | None = Field(None, max_length=256, description="The end user this is about (for forget).")


class EntryOut(BaseModel):
    key: str
    value: Any
    stored_at: str = Field(description="ISO-8601 UTC.")
    expires_at: str = Field(description="ISO-8601 UTC.")
    category: str | None
    tags: list[str]


class EntryList(BaseModel):
    items: list[EntryOut]


class Deleted(BaseModel):
    key: str
    deleted: bool


class Cleared(BaseModel):
    cleared: int


def _out(entry: WorkingEntry) -> EntryOut:
    return EntryOut.model_validate(working_json(entry))


@router.get("", response_model=EntryList, summary="List (whole-segment prefix) or search entries")
def search(
    mem: TenantMemory,
    namespace: Namespace,
    prefix: Annotated[str | None, Query(max_length=300)] = None,
    query: Annotated[str | None, Query(max_length=4000)] = None,
    category: Annotated[str | None, Query(max_length=300)] = None,
    tags: Annotated[list[str] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> EntryList:
    working = WorkingMemory(mem.engine, namespace)
    found = working.search(query, category=category, tags=tags, prefix=prefix, max_results=limit)
    return EntryList(items=[_out(e) for e in found])


@router.delete("", response_model=Cleared, summary="Clear own entries under a prefix")
def clear(
    mem: TenantMemory, namespace: Namespace, prefix: Annotated[str | None, Query(max_length=300)] = None
) -> Cleared:
    return Cleared(cleared=WorkingMemory(mem.engine, namespace).clear(prefix))


@router.put("/{key:path}", response_model=EntryOut, summary="Store an entry in the own namespace")
def put(mem: TenantMemory, key: str, namespace: Namespace, body: EntryIn) -> EntryOut:
    working = WorkingMemory(mem.engine, namespace)
    return _out(
        working.set(
            key,
            body.value,
            ttl=body.ttl_seconds,
            category=body.category,
            tags=body.tags,
            subject=body.subject,
        )
    )


@router.get("/{key:path}", response_model=EntryOut, summary="Read an entry (plain key or full path)")
def get(mem: TenantMemory, key: str, namespace: Namespace) -> EntryOut:
    entry = WorkingMemory(mem.engine, namespace).get(key)
    if entry is None:
        raise EntryNotFound(f"working memory entry {key!r} not found or has expired")
    return _out(entry)


@router.delete("/{key:path}", response_model=Deleted, summary="Delete an own entry")
def delete(mem: TenantMemory, key: str, namespace: Namespace) -> Deleted:
    if not WorkingMemory(mem.engine, namespace).delete(key):
        raise EntryNotFound(f"working memory entry {key!r} not found or has expired")
    return Deleted(key=key, deleted=True)
