"""What the PostgreSQL engine reads for people rather than tiers: every stored record (forget's
verification scan), the records it keeps for itself and how a forget empties them, and the facts
``memstack doctor`` shows.

A record's text is :func:`._raw.raw_text`'s, the layout every engine's ``raw_items`` shares. The
engine's own records: ``events:<id>`` (a published message, kept for listeners catching up) and
``batches:<id>`` (a write batch's first reply and the keys it named, kept for a retry).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from .._raw import raw_text
from ..redis.dedupe import WITHDRAWN
from .codec import unescape
from .schema import SCHEMA_VERSION, Names

if TYPE_CHECKING:
    import psycopg

    from .pool import Requests

__all__ = ["details", "drop_internal", "internal_items", "raw_items"]


# Each container table: the kind its keys row names, its element columns and their order (the
# record text itself is :func:`._raw.raw_text`'s, as on every engine).
_TABLES: Final = {
    "hashes": ("hash", "key, field, value", "key, field"),
    "sets": ("set", "key, member", "key, member"),
    "lists": ("list", "key, value", "key, seq"),
    "zsets": ("zset", "key, member, score", "key, score, member"),
}


def _lines(where: str, *lines: Any) -> str:
    return "\n".join((where, *("" if line is None else unescape(str(line)) for line in lines)))


def _elements(conn: psycopg.Connection[Any], s: str, table: str) -> dict[str, Any]:
    """Every element of one container table, by key, as :func:`raw_text` takes them."""
    kind, columns, order = _TABLES[table]
    out: dict[str, Any] = {}
    for row in conn.execute(f"SELECT {columns} FROM {s}.{table} ORDER BY {order}"):
        key = unescape(row[0])
        if kind == "hash":
            out.setdefault(key, {})[unescape(row[1])] = unescape(row[2])
        elif kind == "zset":
            out.setdefault(key, []).append((unescape(row[1]), row[2]))
        else:
            out.setdefault(key, []).append(unescape(row[1]))
    return out


def raw_items(conn: psycopg.Connection[Any], names: Names) -> list[tuple[str, str]]:
    """``(where, text)`` for every row of every table of the schema: each key with its elements
    (expired ones not yet swept included), the engine's own records, then ``meta:<name>``."""
    s = names.quoted
    contents = {table: _elements(conn, s, table) for table in _TABLES}
    by_kind = {kind: table for table, (kind, _, _) in _TABLES.items()}
    out: list[tuple[str, str]] = []
    for stored, kind, value in conn.execute(f"SELECT key, kind, value FROM {s}.keys"):
        key = unescape(stored)
        table = by_kind.get(kind)
        held = unescape(value or "") if table is None else contents[table].pop(key, [])
        out.append((key, raw_text(key, kind, held)))
    # Elements without their key row: never written so, but a scan for leftovers must see them.
    for table, orphans in contents.items():
        for key, held in orphans.items():
            where = f"{table}:{key}"
            out.append((where, raw_text(where, _TABLES[table][0], held)))
    out += internal_items(conn, names)
    out += [
        (f"meta:{n}", _lines(f"meta:{n}", v)) for n, v in conn.execute(f"SELECT name, value FROM {s}.meta")
    ]
    return out


def internal_items(conn: psycopg.Connection[Any], names: Names) -> list[tuple[str, str]]:
    """The engine's own records: ``events:<id>`` (channel, message) and ``batches:<id>`` (reply,
    then the keys of its batch as a JSON list)."""
    s = names.quoted
    events = conn.execute(f"SELECT id, channel, message FROM {s}.events").fetchall()
    batches = conn.execute(f"SELECT id, reply, keys FROM {s}.batches").fetchall()
    return [(f"events:{i}", _lines(f"events:{i}", c, m)) for i, c, m in events] + [
        (f"batches:{i}", _lines(f"batches:{i}", r, json.dumps([unescape(k) for k in json.loads(ks)])))
        for i, r, ks in batches
    ]


def drop_internal(conn: psycopg.Connection[Any], names: Names, wheres: Iterable[str]) -> int:
    """Delete the named events and withdraw the named batch replies (the row stays, holding
    :data:`WITHDRAWN` and no keys, so a retry of its batch still applies nothing); other names are
    ignored. Returns how many records changed."""
    events: list[int] = []
    batches: list[int] = []
    for where in wheres:
        table, _, ident = where.partition(":")
        if ident.lstrip("-").isdigit() and table in ("events", "batches"):
            (events if table == "events" else batches).append(int(ident))
    s = names.quoted
    dropped = 0
    with conn.transaction():
        if events:
            dropped += conn.execute(f"DELETE FROM {s}.events WHERE id = ANY (%s)", (events,)).rowcount
        if batches:
            dropped += conn.execute(
                f"UPDATE {s}.batches SET reply = %s, keys = '[]' WHERE id = ANY (%s)", (WITHDRAWN, batches)
            ).rowcount
    return dropped


def details(conn: psycopg.Connection[Any], names: Names, requests: Requests) -> dict[str, str]:
    """Server version, schema with its version, and the pool's counters."""
    version = conn.execute("SELECT current_setting('server_version')").fetchone()
    stored = conn.execute(f"SELECT value FROM {names.quoted}.meta WHERE name = 'schema_version'").fetchone()
    stats = requests.stats()
    pool = ", ".join(
        f"{name} {stats.get(key, 0)}"
        for name, key in (("size", "pool_size"), ("idle", "pool_available"), ("max", "pool_max"))
    )
    found = stored[0] if stored else "?"
    return {
        "server": f"PostgreSQL {version[0] if version else '?'} ({requests.label})",
        "schema": f"{names.schema} (version {found}; this memstack writes {SCHEMA_VERSION})",
        "pool": f"{pool}, connection errors {stats.get('connections_errors', 0)}",
    }
