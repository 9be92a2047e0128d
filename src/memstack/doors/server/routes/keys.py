"""``/v1/keys``: API key management, for admin keys only; absent (404) in no-auth mode."""

from __future__ import annotations

from fastapi import APIRouter, Request, status
from pydantic import BaseModel, Field

from ....foundation.errors import EntryNotFound
from ....ops.wire import api_key_json
from ..app import AdminKey
from ..keys import ApiKey, ApiKeyStore
from ..rates import MAX_RATE
from ._common import ERRORS

router = APIRouter(prefix="/v1/keys", tags=["keys"], responses=ERRORS)


class KeyCreate(BaseModel):
    tenants: list[str] = Field(
        min_length=1, max_length=100, description="Tenants the key acts for (first = default)."
    )
    label: str = Field("", max_length=200, description="A note to tell keys apart.")
    admin: bool = Field(False, description="May manage keys over HTTP.")
    rate: int | None = Field(
        None,
        ge=1,
        le=MAX_RATE,
        description="Requests per minute the key may make, across every server on the engine "
        "(429 with Retry-After past it); null: no limit.",
    )


class KeyView(BaseModel):
    key_id: str
    tenants: list[str]
    label: str
    admin: bool
    rate: int | None = Field(description="Requests per minute; null: no limit.")
    created_at: str = Field(description="ISO-8601 UTC.")


class CreatedKey(KeyView):
    token: str = Field(description="The bearer token: shown once, never stored.")


class KeyList(BaseModel):
    items: list[KeyView]


class Revoked(BaseModel):
    key_id: str
    revoked: bool


def _view(key: ApiKey) -> KeyView:
    return KeyView.model_validate(api_key_json(key))


def _store(request: Request) -> ApiKeyStore:
    store: ApiKeyStore = request.app.state.keys
    return store


@router.get("", response_model=KeyList, summary="List API keys (never secrets)")
def list_keys(request: Request, _admin: AdminKey) -> KeyList:
    return KeyList(items=[_view(k) for k in _store(request).list()])


@router.post("", response_model=CreatedKey, status_code=status.HTTP_201_CREATED, summary="Create an API key")
def create_key(request: Request, _admin: AdminKey, body: KeyCreate) -> CreatedKey:
    record, token = _store(request).create(body.tenants, body.label, admin=body.admin, rate=body.rate)
    return CreatedKey(**_view(record).model_dump(), token=token)


@router.delete("/{key_id}", response_model=Revoked, summary="Revoke an API key")
def revoke_key(request: Request, _admin: AdminKey, key_id: str) -> Revoked:
    if not _store(request).revoke(key_id):
        raise EntryNotFound(f"no API key {key_id!r}")
    return Revoked(key_id=key_id, revoked=True)
