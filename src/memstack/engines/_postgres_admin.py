"""What the PostgreSQL engine reads for people rather than tiers: every stored record (forget's
verification scan) and the facts ``memstack doctor`` shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._postgres_codec import unescape
from ._postgres_schema import SCHEMA_VERSION, Names

if TYPE_CHECKING:
    import psycopg

    from ._postgres_pool import Requests

__all__ = ["details", "raw_items"]

# Each container table: its element columns, in the order a key's text lists them.
_ELEMENTS = {
    "hashes": ("field", "value"),
    "sets": ("member",),
    "lists": ("value",),
    "zsets": ("member", "score"),
}


def _text(*parts: Any) -> str:
    return " ".join("" if p is None else unescape(str(p)) for p in parts)


def raw_items(conn: psycopg.Connection[Any], names: Names) -> list[tuple[str, str]]:
    """``(where, text)`` for every row of every table of the schema: each key (its row and its
    elements, by key), then ``events:<id>``, ``batches:<id>``, ``meta:<name>``."""
    s = names.quoted
    records: dict[str, list[str]] = {}
    for key, kind, value, expire in conn.execute(f"SELECT key, kind, value, expire FROM {s}.keys"):
        records[key] = [_text(key, kind, value, expire)]
    orphans: list[tuple[str, str]] = []
    for table, columns in _ELEMENTS.items():
        order = "seq" if table == "lists" else columns[0]
        query = f"SELECT key, {', '.join(columns)} FROM {s}.{table} ORDER BY key, {order}"
        for key, *element in conn.execute(query):
            text = _text(*element)
            if key in records:
                records[key].append(text)
            else:  # an element whose key row is gone: never written so, but report it
                orphans.append((f"{table}:{unescape(key)}", _text(key, *element)))
    out = [(unescape(key), " ".join(parts)) for key, parts in records.items()]
    out += orphans
    out += [
        (f"events:{i}", _text(c, m))
        for i, c, m in conn.execute(f"SELECT id, channel, message FROM {s}.events")
    ]
    out += [(f"batches:{i}", _text(r)) for i, r in conn.execute(f"SELECT id, reply FROM {s}.batches")]
    out += [(f"meta:{n}", _text(v)) for n, v in conn.execute(f"SELECT name, value FROM {s}.meta")]
    return out


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
