"""Operations of the session state tier: sessions, keys, counters, history."""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import Field
from typing_extensions import TypedDict

from ..foundation.errors import InvalidRequest, NotANumber, SessionExists
from ..services.memory import Memory
from .fields import Json, SessionId, Subject
from .paging import Page, PageRequest, page_of
from .spec import Ops, Request, Tool, cli, http
from .wire import history_json

__all__ = ["OPS"]

_KEY = "/v1/sessions/{session_id}/keys/{key}"
# What an agent is told about the tools of this tier (the help of the commands says "a session").
_GET = "Read one value of the current session's state."
_PUT = "Store a JSON value in the current session's state."
_HISTORY = "The current session's recent operations."
Key = Field(max_length=256, description="A key of the session: 1-256 of A-Z a-z 0-9 _ - .")


class Created(TypedDict):
    session_id: str
    created: bool


class View(TypedDict):
    session_id: str
    key_count: int
    values: dict[str, Any]


class Cleared(TypedDict):
    session_id: str
    cleared: list[str]


class Keys(TypedDict):
    session_id: str
    keys: list[str]


class KeyValue(TypedDict):
    session_id: str
    key: str
    value: Any


class History(TypedDict):
    session_id: str
    entries: list[dict[str, Any]]


class ListSessions(PageRequest):
    """Which page of the live sessions."""


class OneSession(Request):
    session_id: SessionId


class CreateSession(Request):
    session_id: SessionId
    ttl_hours: float | None = Field(None, ge=0, description="Whole-session TTL in hours (0: never expires).")
    subject: Subject = None


class ClearKeys(Request):
    session_id: SessionId
    key: str | None = Field(None, max_length=256, description="Only this key (default: every key).")


class OneKey(Request):
    session_id: SessionId
    key: str = Key


class PutValue(Request):
    session_id: SessionId
    key: str = Key
    value: Json
    create: bool = Field(False, description="Create the session first when it does not exist.")
    subject: str | None = Field(
        None, max_length=256, description="With create: the end user the new session is about (for forget)."
    )


class Increment(Request):
    session_id: SessionId
    key: str = Key
    amount: int | float = Field(1, description="An int or a float to add (default 1).")


class ReadHistory(Request):
    session_id: SessionId
    limit: int = Field(50, ge=0, le=10_000, description="The newest N entries (0: all).")


ops = Ops()


@ops("sessions.list", "mem.sessions.list()", tool="list_sessions")
@http("GET /v1/sessions")
@cli("sessions list")
def _list(mem: Memory, r: ListSessions) -> Page:
    """List the live sessions (sorted, paged)."""
    return page_of(mem.sessions.list(), r)


@ops("sessions.create", "mem.sessions.create(session_id)")
@http("POST /v1/sessions", status=201)
@cli("sessions create SESSION_ID")
def _create(mem: Memory, r: CreateSession) -> Created:
    """Create an empty session."""
    mem.sessions.create(r.session_id, ttl_hours=r.ttl_hours, subject=r.subject)
    return {"session_id": r.session_id, "created": True}


@ops("sessions.show", "mem.sessions.items(session_id)")
@http("GET /v1/sessions/{session_id}")
@cli("sessions show SESSION_ID")
def _show(mem: Memory, r: OneSession) -> View:
    """A session with every key and value."""
    values = mem.sessions.items(r.session_id)
    return {"session_id": r.session_id, "key_count": len(values), "values": values}


@ops("sessions.delete", "mem.sessions.delete(session_id)")
@http("DELETE /v1/sessions/{session_id}")
@cli("sessions delete SESSION_ID")
def _delete(mem: Memory, r: OneSession) -> Cleared:
    """Delete a session and all its keys."""
    return {"session_id": r.session_id, "cleared": mem.sessions.delete(r.session_id)}


@ops("sessions.keys", "mem.sessions.keys(session_id)")
@http("GET /v1/sessions/{session_id}/keys")
@cli("sessions keys SESSION_ID")
def _keys(mem: Memory, r: OneSession) -> Keys:
    """The keys of a session (sorted)."""
    return {"session_id": r.session_id, "keys": mem.sessions.keys(r.session_id)}


@ops("sessions.clear", "mem.sessions.clear(session_id, key)")
@http("DELETE /v1/sessions/{session_id}/keys", query=())
@http("DELETE " + _KEY)
@cli("sessions clear SESSION_ID KEY")
def _clear(mem: Memory, r: ClearKeys) -> Cleared:
    """Remove one key, or every key of a session."""
    return {"session_id": r.session_id, "cleared": mem.sessions.clear(r.session_id, r.key)}


@ops("sessions.get", "mem.sessions.get(session_id, key)", tool=Tool("session_get", description=_GET))
@http("GET " + _KEY)
@cli("sessions get SESSION_ID KEY")
def _get(mem: Memory, r: OneKey) -> KeyValue:
    """Read one value of a session."""
    return {"session_id": r.session_id, "key": r.key, "value": mem.sessions.get(r.session_id, r.key)}


@ops(
    "sessions.put",
    "mem.sessions.put(session_id, key, value)",
    tool=Tool("session_put", fixed={"create": True}, description=_PUT),
)
@http("PUT " + _KEY)
@cli("sessions put SESSION_ID KEY VALUE")
def _put(mem: Memory, r: PutValue) -> KeyValue:
    """Store a JSON value under a key of a session."""
    # With create: the create is one guarded batch, so of two concurrent first writes one creates
    # and the other finds it created; both then write.
    if r.subject is not None and not r.create:
        problem = (
            "a session's subject is set when it is created: add create (--create) or use sessions create"
        )
        raise InvalidRequest(f"subject: {problem}", (("subject", problem),))
    if r.create and not mem.sessions.exists(r.session_id):
        with contextlib.suppress(SessionExists):
            mem.sessions.create(r.session_id, subject=r.subject)
    mem.sessions.put(r.session_id, r.key, r.value)
    return {"session_id": r.session_id, "key": r.key, "value": r.value}


@ops("sessions.increment", "mem.sessions.increment(session_id, key, amount)")
@http("POST " + _KEY + "/increment")
@cli("sessions incr SESSION_ID KEY AMOUNT")
def _increment(mem: Memory, r: Increment) -> KeyValue:
    """Add a number to the number at a key, atomically; the new value."""
    try:
        value = mem.sessions.increment(r.session_id, r.key, r.amount)
    except NotANumber as exc:  # the engine's message names its storage key: say it with the caller's ids
        why = str(exc).split("': ", 1)[-1]
        raise NotANumber(f"cannot increment key {r.key!r} of session {r.session_id!r}: {why}") from exc
    return {"session_id": r.session_id, "key": r.key, "value": value}


@ops(
    "sessions.history",
    "mem.sessions.history(session_id, limit)",
    tool=Tool("session_history", description=_HISTORY),
)
@http("GET /v1/sessions/{session_id}/history")
@cli("sessions history SESSION_ID", names={"limit": ("--limit", "-n")})
def _history(mem: Memory, r: ReadHistory) -> History:
    """A session's operation history, oldest first."""
    entries = [history_json(e) for e in mem.sessions.history(r.session_id, r.limit)]
    return {"session_id": r.session_id, "entries": entries}


OPS = tuple(ops.all)
