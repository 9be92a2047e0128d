"""Operations of the session state tier: sessions, keys, counters, history."""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import Field
from typing_extensions import TypedDict

from .._memory import Memory
from ..errors import NotANumber, SessionExists
from ..wire import history_json
from .fields import Json, SessionId, Subject
from .paging import Page, PageRequest, page_of
from .spec import Cli, Http, Op, Request, Tool

__all__ = ["OPS"]

_BASE = "/v1/sessions"
_KEY = "/v1/sessions/{session_id}/keys/{key}"
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


class CreateSession(Request):
    session_id: SessionId
    ttl_hours: float | None = Field(
        None, ge=0, description="Whole-session TTL in hours (fractions allowed; 0: never expires)."
    )
    subject: Subject = None


class OneSession(Request):
    session_id: SessionId


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


class Increment(Request):
    session_id: SessionId
    key: str = Key
    amount: int | float = Field(1, description="An int or a float to add (default 1).")


class ReadHistory(Request):
    session_id: SessionId
    limit: int = Field(50, ge=0, le=10_000, description="The newest N entries (0: all).")


def _list(mem: Memory, r: ListSessions) -> Page:
    return page_of(mem.sessions.list(), r)


def _create(mem: Memory, r: CreateSession) -> Created:
    mem.sessions.create(r.session_id, ttl_hours=r.ttl_hours, subject=r.subject)
    return {"session_id": r.session_id, "created": True}


def _show(mem: Memory, r: OneSession) -> View:
    values = mem.sessions.items(r.session_id)
    return {"session_id": r.session_id, "key_count": len(values), "values": values}


def _delete(mem: Memory, r: OneSession) -> Cleared:
    return {"session_id": r.session_id, "cleared": mem.sessions.delete(r.session_id)}


def _keys(mem: Memory, r: OneSession) -> Keys:
    return {"session_id": r.session_id, "keys": mem.sessions.keys(r.session_id)}


def _clear(mem: Memory, r: ClearKeys) -> Cleared:
    return {"session_id": r.session_id, "cleared": mem.sessions.clear(r.session_id, r.key)}


def _get(mem: Memory, r: OneKey) -> KeyValue:
    return {"session_id": r.session_id, "key": r.key, "value": mem.sessions.get(r.session_id, r.key)}


def _put(mem: Memory, r: PutValue) -> KeyValue:
    # With create: the create is one guarded batch, so of two concurrent first writes one creates
    # and the other finds it created; both then write.
    if r.create and not mem.sessions.exists(r.session_id):
        with contextlib.suppress(SessionExists):
            mem.sessions.create(r.session_id)
    mem.sessions.put(r.session_id, r.key, r.value)
    return {"session_id": r.session_id, "key": r.key, "value": r.value}


def _increment(mem: Memory, r: Increment) -> KeyValue:
    try:
        value = mem.sessions.increment(r.session_id, r.key, r.amount)
    except NotANumber as exc:  # the engine's message names its storage key: say it with the caller's ids
        why = str(exc).split("': ", 1)[-1]
        raise NotANumber(f"cannot increment key {r.key!r} of session {r.session_id!r}: {why}") from exc
    return {"session_id": r.session_id, "key": r.key, "value": value}


def _history(mem: Memory, r: ReadHistory) -> History:
    entries = [history_json(e) for e in mem.sessions.history(r.session_id, r.limit)]
    return {"session_id": r.session_id, "entries": entries}


OPS: tuple[Op[Any], ...] = (
    Op(
        "sessions.list",
        "List the live sessions (sorted, paged).",
        ListSessions,
        _list,
        Page,
        "mem.sessions.list()",
        http=(Http("GET", _BASE),),
        cli=Cli("sessions", "list"),
        tool=Tool("list_sessions"),
    ),
    Op(
        "sessions.create",
        "Create an empty session.",
        CreateSession,
        _create,
        Created,
        "mem.sessions.create(session_id)",
        http=(Http("POST", _BASE, status=201),),
        cli=Cli("sessions", "create", args=("session_id",)),
    ),
    Op(
        "sessions.show",
        "A session with every key and value.",
        OneSession,
        _show,
        View,
        "mem.sessions.items(session_id)",
        http=(Http("GET", _BASE + "/{session_id}"),),
        cli=Cli("sessions", "show", args=("session_id",)),
    ),
    Op(
        "sessions.delete",
        "Delete a session and all its keys.",
        OneSession,
        _delete,
        Cleared,
        "mem.sessions.delete(session_id)",
        http=(Http("DELETE", _BASE + "/{session_id}"),),
        cli=Cli("sessions", "delete", args=("session_id",)),
    ),
    Op(
        "sessions.keys",
        "The keys of a session (sorted).",
        OneSession,
        _keys,
        Keys,
        "mem.sessions.keys(session_id)",
        http=(Http("GET", _BASE + "/{session_id}/keys"),),
        cli=Cli("sessions", "keys", args=("session_id",)),
    ),
    Op(
        "sessions.clear",
        "Remove one key, or every key of a session.",
        ClearKeys,
        _clear,
        Cleared,
        "mem.sessions.clear(session_id, key)",
        http=(Http("DELETE", _BASE + "/{session_id}/keys", query=()), Http("DELETE", _KEY)),
        cli=Cli("sessions", "clear", args=("session_id", "key")),
    ),
    Op(
        "sessions.get",
        "Read one value of a session.",
        OneKey,
        _get,
        KeyValue,
        "mem.sessions.get(session_id, key)",
        http=(Http("GET", _KEY),),
        cli=Cli("sessions", "get", args=("session_id", "key")),
        tool=Tool("session_get", description="Read one value of the current session's state."),
    ),
    Op(
        "sessions.put",
        "Store a JSON value under a key of a session.",
        PutValue,
        _put,
        KeyValue,
        "mem.sessions.put(session_id, key, value)",
        http=(Http("PUT", _KEY),),
        cli=Cli("sessions", "put", args=("session_id", "key", "value")),
        tool=Tool(
            "session_put",
            fixed={"create": True},
            description="Store a JSON value in the current session's state.",
        ),
    ),
    Op(
        "sessions.increment",
        "Add a number to the number at a key, atomically; the new value.",
        Increment,
        _increment,
        KeyValue,
        "mem.sessions.increment(session_id, key, amount)",
        http=(Http("POST", _KEY + "/increment"),),
        cli=Cli("sessions", "incr", args=("session_id", "key", "amount")),
    ),
    Op(
        "sessions.history",
        "A session's operation history, oldest first.",
        ReadHistory,
        _history,
        History,
        "mem.sessions.history(session_id, limit)",
        http=(Http("GET", _BASE + "/{session_id}/history"),),
        cli=Cli("sessions", "history", args=("session_id",), names={"limit": ("--limit", "-n")}),
        tool=Tool("session_history", description="The current session's recent operations."),
    ),
)
