"""Operations of the session state tier: sessions, keys, counters, history."""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import Field
from typing_extensions import TypedDict

from ..foundation.errors import InvalidRequest, SessionExists, SessionNotFound
from ..services.memory import Memory
from ..tiers.session import requests as session
from ..tiers.session.requests import RULES
from .fields import Json
from .paging import Page, PageRequest, page_of
from .spec import Ops, Request, Tool, cli, http
from .wire import history_json

__all__ = ["OPS"]

_KEY = "/v1/sessions/{session_id}/keys/{key}"
# What an agent is told about the tools of this tier (the help of the commands says "a session").
_GET = "Read one value of the current session's state."
_PUT = "Store a JSON value in the current session's state."
_HISTORY = "The current session's recent operations."


def _rule(name: str, default: Any = ...) -> Any:
    """A door field showing the tier's rule ``name`` (its description and JSON-schema bounds); the
    handler builds the tier's request, whose check is the only one (one error on every door)."""
    rule = RULES[name]
    return Field(default, description=rule.doc, json_schema_extra=dict(rule.json))


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
    session_id: str = _rule("session_id")


class CreateSession(Request):
    session_id: str = _rule("session_id")
    ttl_hours: int | float | None = _rule("ttl_hours", None)  # an int stays one, as messages name it
    subject: str | None = _rule("subject", None)


class ClearKeys(Request):
    session_id: str = _rule("session_id")
    key: str | None = _rule("clear_key", None)


class OneKey(Request):
    session_id: str = _rule("session_id")
    key: str = _rule("key")


class PutValue(Request):
    session_id: str = _rule("session_id")
    key: str = _rule("key")
    value: Json
    create: bool = Field(False, description="Create the session first when it does not exist.")
    subject: str | None = Field(
        None,
        description="With create: the end user the new session is about (for forget).",
        json_schema_extra=dict(RULES["subject"].json),
    )


class Increment(Request):
    session_id: str = _rule("session_id")
    key: str = _rule("key")
    amount: int | float = _rule("amount", 1)


class ReadHistory(Request):
    session_id: str = _rule("session_id")
    limit: int = _rule("limit", 50)


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
    mem.sessions.start(session.CreateSession.of(r.session_id, ttl_hours=r.ttl_hours, subject=r.subject))
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
    # With create: the write runs first (a bad value is refused before anything is written); on a
    # missing session the create is one guarded batch, so of two concurrent first writes one creates
    # and the other finds it created; both then write.
    if r.subject is not None and not r.create:
        problem = (
            "a session's subject is set when it is created: add create (--create) or use sessions create"
        )
        raise InvalidRequest(f"subject: {problem}", (("subject", problem),))
    write = session.PutValue.of(r.session_id, r.key, r.value)
    create = session.CreateSession.of(r.session_id, subject=r.subject) if r.create else None
    try:
        mem.sessions.write(write)
    except SessionNotFound:
        if create is None:
            raise
        with contextlib.suppress(SessionExists):
            mem.sessions.start(create)
        mem.sessions.write(write)
    return {"session_id": r.session_id, "key": r.key, "value": r.value}


@ops("sessions.increment", "mem.sessions.increment(session_id, key, amount)")
@http("POST " + _KEY + "/increment")
@cli("sessions incr SESSION_ID KEY AMOUNT")
def _increment(mem: Memory, r: Increment) -> KeyValue:
    """Add a number to the number at a key, atomically; the new value."""
    value = mem.sessions.add(session.Increment.of(r.session_id, r.key, r.amount))
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
    entries = [history_json(e) for e in mem.sessions.recent(session.ReadHistory.of(r.session_id, r.limit))]
    return {"session_id": r.session_id, "entries": entries}


OPS = tuple(ops.all)
