"""The Redis engine's raw records: every key of every primary, batch replies included, read for a
forget's verification and for tests (:meth:`memstack.engines.base.Engine.raw_items`).

A key is read by its type (``TYPE``, then the one read command of that type), in pipelines of
:data:`CHUNK` keys per node. A batch reply a forget withdrew keeps its key and TTL (a retry of its
batch must still find it and apply nothing) but holds only :data:`~.dedupe.WITHDRAWN`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final

from .._raw import raw_text
from .dedupe import PREFIX, WITHDRAWN, is_dedupe_key
from .url import Address

__all__ = ["drop_replies", "node_items", "reply_items"]

Admin = Callable[..., list[Any]]
"""``admin(node, *commands)``: idempotent commands in one pipeline on one node."""

CHUNK: Final = 500
_SCAN_COUNT: Final = "1000"
_READ: Final[dict[str, tuple[str, ...]]] = {
    "string": ("GET",),
    "hash": ("HGETALL",),
    "set": ("SMEMBERS",),
    "list": ("LRANGE", "{}", "0", "-1"),
    "zset": ("ZRANGE", "{}", "0", "-1", "WITHSCORES"),
}
"""The read of each type: the command, then its arguments (``{}``: the key; no arguments: the key alone)."""


def _read(kind: str, key: str) -> tuple[str, ...]:
    command, *args = _READ[kind]
    return (command, key) if not args else (command, *(key if a == "{}" else a for a in args))


def _keys(admin: Admin, node: Address, pattern: str | None) -> list[str]:
    found: dict[str, None] = {}
    cursor = "0"
    match = ("MATCH", pattern) if pattern is not None else ()
    while True:
        ((cursor, batch),) = admin(node, ("SCAN", cursor, *match, "COUNT", _SCAN_COUNT))
        found.update((k, None) for k in batch)
        if cursor == "0":
            return list(found)


def _value(kind: str, reply: Any) -> Any:
    if kind != "zset":
        return reply
    if reply and isinstance(reply[0], list | tuple):  # redis-py paired them already
        return [(m, float(s)) for m, s in reply]
    return [(reply[i], float(reply[i + 1])) for i in range(0, len(reply), 2)]


def node_items(admin: Admin, node: Address) -> Iterator[tuple[str, str]]:
    """Every key of one node with its content (a key gone between the scan and the read is skipped)."""
    keys = _keys(admin, node, None)
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        kinds = [str(k) for k in admin(node, *(("TYPE", key) for key in chunk))]
        live = [(key, kind) for key, kind in zip(chunk, kinds, strict=True) if kind in _READ]
        if not live:
            continue
        replies = admin(node, *(_read(kind, key) for key, kind in live))
        for (key, kind), reply in zip(live, replies, strict=True):
            yield key, raw_text(key, kind, _value(kind, reply))


def reply_items(admin: Admin, node: Address) -> Iterator[tuple[str, str]]:
    """The batch replies of one node (``ms:batch:…``) with their stored text."""
    keys = [k for k in _keys(admin, node, PREFIX + "*") if is_dedupe_key(k)]
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        for key, text in zip(chunk, admin(node, *(("GET", k) for k in chunk)), strict=True):
            if text is not None:
                yield key, raw_text(key, "string", text)


def drop_replies(admin: Admin, node_of: Callable[[str], Address], wheres: Iterable[str]) -> int:
    """Withdraw the batch replies named in ``wheres``: each keeps its key and TTL and holds only
    :data:`WITHDRAWN`, so a retry of its batch still applies nothing; returns how many."""
    by_node: dict[Address, list[str]] = {}
    for key in wheres:
        if is_dedupe_key(key):
            by_node.setdefault(node_of(key), []).append(key)
    dropped = 0
    for node, keys in by_node.items():
        for start in range(0, len(keys), CHUNK):
            chunk: Sequence[str] = keys[start : start + CHUNK]
            replies = admin(node, *(("SET", k, WITHDRAWN, "XX", "KEEPTTL") for k in chunk))
            dropped += sum(1 for r in replies if r)
    return dropped
