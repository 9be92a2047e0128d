"""Operations of reactive shared memory (boards): snapshots, long-poll reads, compare-and-set."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, Field
from typing_extensions import TypedDict

from ..services.memory import Memory

if TYPE_CHECKING:
    from ..tiers.shared import SharedMemory
from ..foundation.errors import EntryNotFound
from ..tiers.shared import requests as shared
from ..tiers.shared.requests import RULES
from ..tiers.shared.serialize import check_key
from .fields import Json
from .paging import Page, PageRequest, page_of
from .spec import Ops, Request, cli, http

__all__ = ["MAX_WAIT", "OPS"]

MAX_WAIT = 60.0
"""The longest ``wait`` a request may ask for (a server may cut it shorter): a door's own bound,
past the tier's rule (the library waits as long as it is told)."""


def _rule(name: str, default: Any = ..., **door: Any) -> Any:
    """A door field showing the tier's rule ``name`` (its description and JSON-schema bounds); the
    handler builds the tier's request, whose check is the only one (one error on every door).
    ``door``: JSON-schema bounds of the door's own, past the tier's rule."""
    rule = RULES[name]
    return Field(default, description=rule.doc, json_schema_extra={**rule.json, **door})


Board = Annotated[str, _rule("name")]


def _door_bound(seconds: float) -> float:
    """The door's bound on a wait (the tier checks the rest: its own rule, one message)."""
    if seconds > MAX_WAIT:
        raise ValueError(f"input should be less than or equal to {MAX_WAIT:g}")
    return seconds


Seconds = Annotated[int | float, AfterValidator(_door_bound)]


class Snapshot(TypedDict):
    name: str
    snapshot: dict[str, Any]


class KeyValue(TypedDict):
    name: str
    key: str
    value: Any
    version: int


class Deleted(TypedDict):
    name: str
    key: str
    previous: Any


class ListBoards(PageRequest):
    """Which page of the boards that hold anything."""


class OneBoard(Request):
    name: Board


class ReadKey(Request):
    name: Board
    key: str = _rule("key")
    wait: Seconds = _rule("wait", 0, maximum=MAX_WAIT)  # an int stays one, as messages name it


class WriteKey(Request):
    name: Board
    key: str = _rule("key")
    value: Json
    version: int | None = _rule("version", None)
    subject: str | None = _rule("subject", None)


class OneKey(Request):
    name: Board
    key: str = _rule("key")


def _board(mem: Memory, name: str) -> SharedMemory:
    from ..tiers.shared import SharedMemory

    return SharedMemory(mem.engine, name, enable_cache=False)


ops = Ops()
_KEY = "/v1/shared/{name}/keys/{key}"


@ops("shared.list", "memstack.tiers.shared.list_boards(mem.engine)", tool="list_shared_boards")
@http("GET /v1/shared")
@cli("shared list")
def _boards(mem: Memory, r: ListBoards) -> Page:
    """List the boards that hold anything (sorted, paged)."""
    from ..tiers.shared import list_boards

    return page_of(list_boards(mem.engine), r)


@ops("shared.show", "mem.shared(name).to_dict()")
@http("GET /v1/shared/{name}")
@cli("shared show NAME")
def _snapshot(mem: Memory, r: OneBoard) -> Snapshot:
    """A whole board (its snapshot)."""
    with _board(mem, r.name) as board:
        return {"name": r.name, "snapshot": board.to_dict()}


@ops("shared.get", "mem.shared(name).get(key, wait=...)")
@http("GET " + _KEY)
@cli("shared get NAME KEY")
async def _get(mem: Memory, r: ReadKey) -> KeyValue:
    """Read a key of a board with its version; wait long-polls for a missing key."""
    with _board(mem, r.name) as board:
        read = shared.ReadKeys.of(r.key, wait=r.wait)
        if r.wait > 0:
            await board.aread(read)
        elif r.key not in board:
            raise EntryNotFound(f"shared memory {r.name!r} has no key {r.key!r}")
        value, version = board.get_with_version(r.key)
        return {"name": r.name, "key": r.key, "value": value, "version": version}


@ops("shared.put", "mem.shared(name).set(key, value)")
@http("PUT " + _KEY)
@cli("shared put NAME KEY VALUE")
def _put(mem: Memory, r: WriteKey) -> KeyValue:
    """Write a key of a board (compare-and-set with a version)."""
    with _board(mem, r.name) as board:
        if r.version is not None:
            request = shared.SetIfVersion.of(r.key, r.value, version=r.version, subject=r.subject)
            version = board.put_if(request)
        else:
            board.put(shared.SetKey.of(r.key, r.value, subject=r.subject))
            version = board.version(r.key)
        return {"name": r.name, "key": r.key, "value": r.value, "version": version}


@ops("shared.delete", "mem.shared(name).delete(key)")
@http("DELETE " + _KEY)
@cli("shared delete NAME KEY")
def _delete(mem: Memory, r: OneKey) -> Deleted:
    """Delete a key of a board."""
    with _board(mem, r.name) as board:
        found = check_key(r.key) in board
        previous = board.delete(r.key) if found else None
    if not found:
        raise EntryNotFound(f"shared memory {r.name!r} has no key {r.key!r}")
    return {"name": r.name, "key": r.key, "previous": previous}


OPS = tuple(ops.all)
