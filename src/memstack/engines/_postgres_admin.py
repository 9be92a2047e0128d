"""What the PostgreSQL engine reads for people rather than tiers: every stored record (forget's
verification scan), the records it keeps for itself and how a forget empties them, and the facts
``memstack doctor`` shows.

A record's text is its name, then its content one line per field, member, element or score (a
hash as ``field<TAB>value`` lines, a set sorted, a list in order, a sorted set as
``member<TAB>score`` lines by score), the layout every engine's ``raw_items`` shares. The engine's
own records: ``events:<id>`` (a published message, kept for listeners catching up) and
``batches:<id>`` (a write batch's first reply and the keys it named, kept for a retry).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from ._postgres_codec import WITHDRAWN, unescape
from ._postgres_schema import SCHEMA_VERSION, Names

if TYPE_CHECKING:
    import psycopg

    from ._postgres_pool import Requests

__all__ = ["details", "drop_internal", "internal_items", "raw_items"]


# Each container table: its element text and the order of its elements in a key's text (the
# scores of a sorted set are added in Python: repr(), as every engine writes them).
_ELEMENTS: Final = {
    "hash": ("hashes", "e.field || E'\\t' || e.value", "e.field"),
    "set": ("sets", "e.member", "e.member"),
    "list": ("lists", "e.value", "e.seq"),
    "zset": ("zsets", "e.member || E'\\t'", "e.score, e.member"),
}


def _lines(where: str, *lines: Any) -> str:
    return "\n".join((where, *("" if line is None else unescape(str(line)) for line in lines)))


def raw_items(conn: psycopg.Connection[Any], names: Names) -> list[tuple[str, str]]:
    """``(where, text)`` for every row of every table of the schema: each key with its elements
    (expired ones not yet swept included), the engine's own records, then ``meta:<name>``."""
    s = names.quoted
    out: list[tuple[str, str]] = []
    strings = f"SELECT key, value FROM {s}.keys WHERE kind = 'string'"
    out += [(unescape(k), _lines(unescape(k), v)) for k, v in conn.execute(strings)]
    for kind, (table, line, order) in _ELEMENTS.items():
        score = "e.score" if kind == "zset" else "NULL::float8"
        query = (
            f"SELECT k.key, array_agg({line} ORDER BY {order}), array_agg({score} ORDER BY {order}) "
            f"FROM {s}.keys k LEFT JOIN {s}.{table} e ON e.key = k.key WHERE k.kind = '{kind}' GROUP BY k.key"
        )
        for key, lines, scores in conn.execute(query):
            texts = [
                x if sc is None else f"{x}{sc!r}"
                for x, sc in zip(lines, scores, strict=True)
                if x is not None
            ]
            out.append((unescape(key), _lines(unescape(key), *texts)))
        # Elements without their key row: never written so, but a scan for leftovers must see them.
        stray = f"SELECT e.key, {line} FROM {s}.{table} e WHERE e.key NOT IN (SELECT key FROM {s}.keys)"
        out += [
            (f"{table}:{unescape(k)}", _lines(f"{table}:{unescape(k)}", x)) for k, x in conn.execute(stray)
        ]
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
