"""The SQLite engine's raw records: every row of every table of the file, read for a forget's
verification and for tests (:meth:`memstack.engines.base.Engine.raw_items`).

A key and the rows of its container table are one record named by the key; a container row
without its ``keys`` row (none should exist) is a record of its own, ``{table}:{key}``. A change
event is ``events:{id}``; any other table's row is ``{table}:{n}``. Rows are read whole,
expired keys not yet swept included.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from .._raw import raw_text

__all__ = ["EVENT", "drop_events", "event_items", "raw_items"]

Read = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]

EVENT: Final = "events:"
"""What the name of an event row starts with (``events:{id}``)."""
_CONTAINERS: Final = {
    "hashes": "SELECT key, field, value FROM hashes ORDER BY key, field",
    "sets": "SELECT key, member FROM sets ORDER BY key, member",
    "lists": "SELECT key, value FROM lists ORDER BY key, seq",
    "zsets": "SELECT key, member, score FROM zsets ORDER BY key, score, member",
}
_KIND_OF_TABLE: Final = {"hashes": "hash", "sets": "set", "lists": "list", "zsets": "zset"}
_TABLE_OF_KIND: Final = {kind: table for table, kind in _KIND_OF_TABLE.items()}


def _container(rows: list[tuple[Any, ...]], table: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for row in rows:
        key = row[0]
        if table == "hashes":
            out.setdefault(key, {})[row[1]] = row[2]
        elif table == "zsets":
            out.setdefault(key, []).append((row[1], row[2]))
        else:
            out.setdefault(key, []).append(row[1])
    return out


def event_items(read: Read) -> list[tuple[str, str]]:
    """The rows of the event table."""
    rows = read("SELECT id, channel, message FROM events ORDER BY id", ())
    return [(f"{EVENT}{i}", f"{EVENT}{i}\n{channel}\n{message}") for i, channel, message in rows]


def raw_items(read: Read) -> Iterator[tuple[str, str]]:
    """Every record of the file (see the module docstring)."""
    tables = [r[0] for r in read("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", ())]
    contents = {t: _container(read(sql, ()), t) for t, sql in _CONTAINERS.items() if t in tables}
    for key, kind, value in read("SELECT key, kind, value FROM keys", ()):
        table = _TABLE_OF_KIND.get(kind)
        held = value if table is None else contents.get(table, {}).pop(key, [])
        yield key, raw_text(key, kind, held)
    for table, orphans in contents.items():
        for key, held in orphans.items():
            where = f"{table}:{key}"
            yield where, raw_text(where, _KIND_OF_TABLE[table], held)
    yield from event_items(read) if "events" in tables else ()
    for table in tables:
        if table in ("keys", "events", *_CONTAINERS):
            continue
        for n, row in enumerate(read(f'SELECT * FROM "{table}"', ())):
            name = f"{table}:{row[0] if table == 'sqlite_sequence' else n}"
            yield name, "\n".join((name, *(str(c) for c in row)))


def drop_events(cur: sqlite3.Cursor, wheres: Iterable[str]) -> int:
    """Delete the event rows named in ``wheres`` (inside the caller's transaction)."""
    ids = [int(w[len(EVENT) :]) for w in wheres if w.startswith(EVENT) and w[len(EVENT) :].isdigit()]
    dropped = 0
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        dropped += cur.execute(f"DELETE FROM events WHERE id IN ({marks})", chunk).rowcount
    return dropped
