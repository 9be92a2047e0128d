"""The seam commands as SQL over the SQLite engine's schema, run inside one transaction.

Each ``op_<name>(tx, *args)`` mirrors ``ops.op_<name>``; :data:`OPS` maps every command
of the table (``engines.commands``) to its function, checked complete at import (lists and sorted
sets live in ``sequences``). The ``keys`` row of a key carries its type, string value,
expire-at and, for containers, the element count ``n``, so type checks and lengths cost one
primary-key lookup (or none, from the cache of ``tx``).

SQL strings are constants so ``sqlite3`` reuses its prepared statements.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

from .. import _local_ops
from .. import _semantics as sem
from ..base import Number
from ..commands import handler_map
from . import sequences as _sqlite_sequences
from .tx import Row, Tx, rows_of

__all__ = ["OPS"]

_H_GET: Final = "SELECT value FROM hashes WHERE key = ? AND field = ?"
_H_ALL: Final = "SELECT field, value FROM hashes WHERE key = ?"
_H_KEYS: Final = "SELECT field FROM hashes WHERE key = ?"
_H_MANY_CHUNK: Final = 64
_H_MANY_FROM: Final = 8
_H_MANY: Final = (
    f"SELECT field, value FROM hashes WHERE key = ? AND field IN ({', '.join('?' * _H_MANY_CHUNK)})"
)
_H_UPSERT: Final = _sqlite_sequences.member_sql("hashes", "field", "value")
_H_INSERT, _H_UPDATE = _H_UPSERT[0], _H_UPSERT[2]
_H_DELETE: Final = "DELETE FROM hashes WHERE key = ? AND field = ?"

# Sets: add, remove, all members, one member.
_S_INSERT_IGNORE, _S_DELETE, _S_ALL, _S_HAS = (
    "INSERT OR IGNORE INTO sets (key, member) VALUES (?, ?)",
    "DELETE FROM sets WHERE key = ? AND member = ?",
    "SELECT member FROM sets WHERE key = ?",
    "SELECT 1 FROM sets WHERE key = ? AND member = ?",
)

_PUBLISH: Final = "INSERT INTO events (channel, message, at) VALUES (?, ?, ?)"


# -- keys ------------------------------------------------------------------------------------
def op_delete(tx: Tx, *keys: str) -> int:
    return sum(tx.drop_live(key) for key in dict.fromkeys(keys))


def op_pexpire(tx: Tx, key: str, ms: int) -> bool:
    if ms <= 0:
        return tx.drop_live(key)
    row = tx.meta(key)
    if row is None:
        return False
    tx.stage(key, (row[0], row[1], tx.now + ms, row[3], row[4]))
    return True


def op_persist(tx: Tx, key: str) -> bool:
    row = tx.meta(key)
    if row is None or row[2] is None:
        return False
    tx.stage(key, (row[0], row[1], None, row[3], row[4]))
    return True


def op_pttl(tx: Tx, key: str) -> int:
    row = tx.meta(key)
    if row is None:
        return -2
    return -1 if row[2] is None else int(row[2]) - tx.now


def op_copy_ttl(tx: Tx, src: str, *dsts: str) -> int:
    source = tx.meta(src)
    if source is None or source[2] is None:
        return 0
    copied = 0
    for dst in dsts:
        target = tx.meta(dst)
        if target is None:
            continue
        if target[2] != source[2]:
            tx.stage(dst, (target[0], target[1], source[2], target[3], target[4]))
        copied += 1
    return copied


# -- strings ---------------------------------------------------------------------------------
def op_get(tx: Tx, key: str) -> str | None:
    row = tx.typed(key, "string")
    return None if row is None else tx.value(key, row)


def op_mget(tx: Tx, *keys: str) -> list[str | None]:
    if tx.cache is None and len(keys) > 1:  # a read: every row in a few statements
        found = rows_of(tx.cur, keys)
        return [_live_string(found.get(key), tx.now) for key in keys]
    if tx.cache is not None:
        tx.prefetch(keys)
    out: list[str | None] = []
    for key in keys:
        row = tx.meta(key)
        out.append(tx.value(key, row) if row is not None and row[0] == "string" else None)
    return out


def _live_string(row: Row | None, now: int) -> str | None:
    if row is None or row[0] != "string" or (row[2] is not None and row[2] <= now):
        return None
    return str(row[1])


def op_set(tx: Tx, key: str, value: str, px: int | None, nx: bool, xx: bool, keepttl: bool) -> bool:
    expire = None if px is None else tx.now + px
    if nx and xx:
        return False
    if nx or xx or (keepttl and px is None):
        row = tx.meta(key)
        if (nx and row is not None) or (xx and row is None):
            return False
        if keepttl and px is None and row is not None:
            expire = row[2]
    tx.set_string(key, value, expire)
    return True


def op_incr(tx: Tx, key: str, amount: Number) -> Number:
    row = tx.typed(key, "string")
    total = sem.add_numbers(sem.parse_number(None if row is None else tx.value(key, row), key), amount, key)
    text = sem.format_number(total)
    tx.stage(key, ("string", text, None if row is None else row[2], None, None))
    return total


# -- hashes ----------------------------------------------------------------------------------
def op_hset(tx: Tx, key: str, mapping: dict[str, str]) -> int:
    return _sqlite_sequences.upsert_members(tx, key, "hash", dict(mapping), _H_UPSERT)


def op_hget(tx: Tx, key: str, field: str) -> str | None:
    if tx.typed(key, "hash") is None:
        return None
    row = tx.cur.execute(_H_GET, (key, field)).fetchone()
    return None if row is None else str(row[0])


def op_hmget(tx: Tx, key: str, *fields: str) -> list[str | None]:
    if tx.typed(key, "hash") is None:
        return [None] * len(fields)
    if len(fields) < _H_MANY_FROM:
        out: list[str | None] = []
        for field in fields:
            row = tx.cur.execute(_H_GET, (key, field)).fetchone()
            out.append(None if row is None else row[0])
        return out
    # One statement per 64 fields (a statement per field cost ~6 us each: 0.6 ms for the hundred
    # vectors a graph-backed search reads); a short chunk repeats its last field, so that the
    # statement text, and sqlite3's prepared statement, is always the same.
    found: dict[str, str] = {}
    for start in range(0, len(fields), _H_MANY_CHUNK):
        chunk = fields[start : start + _H_MANY_CHUNK]
        padded = chunk + (chunk[-1],) * (_H_MANY_CHUNK - len(chunk))
        found.update(tx.cur.execute(_H_MANY, (key, *padded)).fetchall())
    return [found.get(field) for field in fields]


def op_hgetall(tx: Tx, key: str) -> dict[str, str]:
    if tx.typed(key, "hash") is None:
        return {}
    return dict(tx.cur.execute(_H_ALL, (key,)).fetchall())


def op_hkeys(tx: Tx, key: str) -> list[str]:
    if tx.typed(key, "hash") is None:
        return []
    return [r[0] for r in tx.cur.execute(_H_KEYS, (key,)).fetchall()]


def op_hlen(tx: Tx, key: str) -> int:
    row = tx.typed(key, "hash")
    return 0 if row is None else int(row[4])


def op_hdel(tx: Tx, key: str, *fields: str) -> int:
    return _sqlite_sequences.remove_members(tx, key, "hash", _H_DELETE, fields)


def op_hincr(tx: Tx, key: str, field: str, amount: Number) -> Number:
    row = tx.typed(key, "hash")
    cur = tx.cur
    found = None if row is None else cur.execute(_H_GET, (key, field)).fetchone()
    name = f"{key}.{field}"
    total = sem.add_numbers(sem.parse_number(None if found is None else found[0], name), amount, name)
    text = sem.format_number(total)
    if found is not None:
        cur.execute(_H_UPDATE, (text, key, field))
        return total
    if row is None:
        row = tx.container(key, "hash")
    cur.execute(_H_INSERT, (key, field, text))
    tx.resize(key, row, row[4] + 1)
    return total


# -- sets ------------------------------------------------------------------------------------
def op_sadd(tx: Tx, key: str, *members: str) -> int:
    if not members:
        return 0
    row = tx.container(key, "set")
    if len(members) == 1:
        new = tx.cur.execute(_S_INSERT_IGNORE, (key, members[0])).rowcount
    else:
        new = tx.cur.executemany(_S_INSERT_IGNORE, [(key, m) for m in members]).rowcount
    if new:
        tx.resize(key, row, row[4] + new)
    return int(new)


def op_srem(tx: Tx, key: str, *members: str) -> int:
    return _sqlite_sequences.remove_members(tx, key, "set", _S_DELETE, members)


def op_smembers(tx: Tx, key: str) -> set[str]:
    if tx.typed(key, "set") is None:
        return set()
    return {r[0] for r in tx.cur.execute(_S_ALL, (key,)).fetchall()}


def op_sismember(tx: Tx, key: str, member: str) -> bool:
    if tx.typed(key, "set") is None:
        return False
    return tx.cur.execute(_S_HAS, (key, member)).fetchone() is not None


def op_scard(tx: Tx, key: str) -> int:
    row = tx.typed(key, "set")
    return 0 if row is None else int(row[4])


# -- notifications ----------------------------------------------------------------------
def op_publish(tx: Tx, channel: str, message: str) -> None:
    tx.cur.execute(_PUBLISH, (channel, message, time.time()))
    tx.published = True


OPS: Final[dict[str, Callable[..., Any]]] = handler_map(
    {**vars(_local_ops), **vars(_sqlite_sequences), **globals()}, "op_", "sqlite engine"
)
