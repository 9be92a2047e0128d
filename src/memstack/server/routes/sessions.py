"""``/v1/sessions``: session state (keys, counters, history) of the caller's tenant."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, status
from pydantic import BaseModel, Field

from ...errors import NotANumber
from ...wire import history_json
from ..app import TenantMemory
from ..error_table import scrub
from ._common import ERRORS, page_of

router = APIRouter(prefix="/v1/sessions", tags=["sessions"], responses=ERRORS)


class SessionCreate(BaseModel):
    session_id: str = Field(description="1-128 characters of A-Z a-z 0-9 _ -")
    ttl_hours: float | None = Field(None, ge=0, description="Whole-session TTL (fractions allowed).")
    subject: str | None = Field(None, max_length=256, description="The end user this is about (for forget).")


class SessionRef(BaseModel):
    session_id: str


class SessionPage(BaseModel):
    items: list[str]
    next_cursor: str | None = None


class SessionView(BaseModel):
    session_id: str
    key_count: int
    values: dict[str, Any]


class Cleared(BaseModel):
    session_id: str
    cleared: list[str]


class KeyList(BaseModel):
    session_id: str
    keys: list[str]


class KeyValue(BaseModel):
    session_id: str
    key: str
    value: Any


class ValueIn(BaseModel):
    value: Any = Field(description="Any JSON value.")


class Increment(BaseModel):
    amount: int | float = 1


class History(BaseModel):
    session_id: str
    entries: list[dict[str, Any]]


@router.get("", response_model=SessionPage, summary="List live sessions (sorted, paginated)")
def list_sessions(
    mem: TenantMemory,
    cursor: Annotated[str | None, Query(max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> SessionPage:
    items, next_cursor = page_of(mem.sessions.list(), cursor, limit)
    return SessionPage(items=items, next_cursor=next_cursor)


@router.post("", response_model=SessionRef, status_code=status.HTTP_201_CREATED, summary="Create a session")
def create_session(mem: TenantMemory, body: SessionCreate) -> SessionRef:
    mem.sessions.create(body.session_id, ttl_hours=body.ttl_hours, subject=body.subject)
    return SessionRef(session_id=body.session_id)


@router.get("/{session_id}", response_model=SessionView, summary="A session with all its values")
def get_session(mem: TenantMemory, session_id: str) -> SessionView:
    values = mem.sessions.items(session_id)
    return SessionView(session_id=session_id, key_count=len(values), values=values)


@router.delete("/{session_id}", response_model=Cleared, summary="Delete a session")
def delete_session(mem: TenantMemory, session_id: str) -> Cleared:
    return Cleared(session_id=session_id, cleared=mem.sessions.delete(session_id))


@router.get("/{session_id}/keys", response_model=KeyList, summary="Keys of a session (sorted)")
def list_keys(mem: TenantMemory, session_id: str) -> KeyList:
    return KeyList(session_id=session_id, keys=mem.sessions.keys(session_id))


@router.delete("/{session_id}/keys", response_model=Cleared, summary="Clear every key of a session")
def clear_keys(mem: TenantMemory, session_id: str) -> Cleared:
    return Cleared(session_id=session_id, cleared=mem.sessions.clear(session_id))


@router.get("/{session_id}/keys/{key}", response_model=KeyValue, summary="One value")
def get_key(mem: TenantMemory, session_id: str, key: str) -> KeyValue:
    return KeyValue(session_id=session_id, key=key, value=mem.sessions.get(session_id, key))


@router.put("/{session_id}/keys/{key}", response_model=KeyValue, summary="Store a JSON value")
def put_key(mem: TenantMemory, session_id: str, key: str, body: ValueIn) -> KeyValue:
    mem.sessions.put(session_id, key, body.value)
    return KeyValue(session_id=session_id, key=key, value=body.value)


@router.delete("/{session_id}/keys/{key}", response_model=Cleared, summary="Clear one key")
def clear_key(mem: TenantMemory, session_id: str, key: str) -> Cleared:
    return Cleared(session_id=session_id, cleared=mem.sessions.clear(session_id, key))


@router.post("/{session_id}/keys/{key}/increment", response_model=KeyValue, summary="Atomic increment")
def increment(mem: TenantMemory, session_id: str, key: str, body: Increment) -> KeyValue:
    try:
        value = mem.sessions.increment(session_id, key, body.amount)
    except NotANumber as exc:  # the engine's message names its storage key; say it with the caller's ids
        own = scrub(str(exc)).replace("'<internal key>'", f"key {key!r} of session {session_id!r}")
        raise NotANumber(own) from exc
    return KeyValue(session_id=session_id, key=key, value=value)


@router.get("/{session_id}/history", response_model=History, summary="Operation history, oldest first")
def history(
    mem: TenantMemory, session_id: str, limit: Annotated[int, Query(ge=0, le=10_000)] = 50
) -> History:
    return History(
        session_id=session_id, entries=[history_json(e) for e in mem.sessions.history(session_id, limit)]
    )
