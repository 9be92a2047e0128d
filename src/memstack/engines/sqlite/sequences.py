"""Lists and sorted sets for the SQLite engine: the ordered containers, read by index ranges.

List elements sit at consecutive ``seq`` numbers from the ``keys`` row's ``lo`` (every list
command removes from the ends only), so element ``i`` is ``seq = lo + i`` and any range is one
primary-key range scan. A sorted set's rank range reads the ``(key, score, member)`` index from
whichever end is nearer, since SQLite's ``OFFSET`` walks the rows it skips. Costs follow the
range asked for, not the container size.
"""

from __future__ import annotations

from typing import Final

from .. import _semantics as sem
from .tx import Tx

_L_INSERT: Final = "INSERT INTO lists (key, seq, value) VALUES (?, ?, ?)"
_L_RANGE: Final = "SELECT value FROM lists WHERE key = ? AND seq >= ? AND seq < ? ORDER BY seq"
_L_AT: Final = "SELECT value FROM lists WHERE key = ? AND seq = ?"
_L_POP: Final = "DELETE FROM lists WHERE key = ? AND seq = ? RETURNING value"
_L_CUT_BELOW: Final = "DELETE FROM lists WHERE key = ? AND seq < ?"
_L_CUT_FROM: Final = "DELETE FROM lists WHERE key = ? AND seq >= ?"


def member_sql(table: str, member: str, value: str) -> tuple[str, str, str]:
    """``(insert, insert-or-ignore, update)`` of the ``(key, member, value)`` rows of a hash or
    zset table, as :func:`upsert_members` takes them."""
    rows = f"{table} (key, {member}, {value}) VALUES (?, ?, ?)"
    update = f"UPDATE {table} SET {value} = ? WHERE key = ? AND {member} = ?"
    return f"INSERT INTO {rows}", f"INSERT OR IGNORE INTO {rows}", update


_Z_UPSERT: Final = member_sql("zsets", "member", "score")
_Z_DELETE: Final = "DELETE FROM zsets WHERE key = ? AND member = ?"
_Z_SCORE: Final = "SELECT score FROM zsets WHERE key = ? AND member = ?"
_Z_ASC: Final = "SELECT member, score FROM zsets WHERE key = ? ORDER BY score, member LIMIT ? OFFSET ?"
_Z_DESC: Final = (
    "SELECT member, score FROM zsets WHERE key = ? ORDER BY score DESC, member DESC LIMIT ? OFFSET ?"
)
_Z_BY_SCORE: Final = (
    "SELECT member, score FROM zsets WHERE key = ? AND score >= ? AND score <= ? "
    "ORDER BY score, member LIMIT ? OFFSET ?"
)
_Z_BY_SCORE_DESC: Final = (
    "SELECT member, score FROM zsets WHERE key = ? AND score >= ? AND score <= ? "
    "ORDER BY score DESC, member DESC LIMIT ? OFFSET ?"
)


# -- lists -----------------------------------------------------------------------------------
def op_rpush(tx: Tx, key: str, *values: str) -> int:
    if not values:
        return op_llen(tx, key)
    row = tx.container(key, "list")
    lo, n = row[3], row[4]
    end = lo + n
    for i, value in enumerate(values):
        tx.append_element(key, end + i, value)
    tx.resize(key, row, n + len(values))
    return int(n + len(values))


def op_lpush(tx: Tx, key: str, *values: str) -> int:
    if not values:
        return op_llen(tx, key)
    row = tx.container(key, "list")
    lo, n = row[3], row[4]
    tx.cur.executemany(_L_INSERT, [(key, lo - 1 - i, v) for i, v in enumerate(values)])
    tx.resize(key, row, n + len(values), lo - len(values))
    return int(n + len(values))


def op_lrange(tx: Tx, key: str, start: int, stop: int) -> list[str]:
    row = tx.typed(key, "list")
    if row is None:
        return []
    lo = row[3]
    a, b = sem.slice_bounds(start, stop, row[4])
    if a == b:
        return []
    tx.settle()
    return [r[0] for r in tx.cur.execute(_L_RANGE, (key, lo + a, lo + b)).fetchall()]


def op_llen(tx: Tx, key: str) -> int:
    row = tx.typed(key, "list")
    return 0 if row is None else int(row[4])


def op_lindex(tx: Tx, key: str, index: int) -> str | None:
    row = tx.typed(key, "list")
    if row is None:
        return None
    n = row[4]
    if not -n <= index < n:
        return None
    tx.settle()
    found = tx.cur.execute(_L_AT, (key, row[3] + (index % n))).fetchone()
    return None if found is None else str(found[0])


def op_ltrim(tx: Tx, key: str, start: int, stop: int) -> None:
    row = tx.typed(key, "list")
    if row is None:
        return
    lo, n = row[3], row[4]
    a, b = sem.slice_bounds(start, stop, n)
    if a == b:
        tx.resize(key, row, 0)
        return
    tx.settle()
    if a > 0:
        tx.cur.execute(_L_CUT_BELOW, (key, lo + a))
    if b < n:
        tx.cur.execute(_L_CUT_FROM, (key, lo + b))
    if a > 0 or b < n:
        tx.resize(key, row, b - a, lo + a)


def _pop(tx: Tx, key: str, left: bool) -> str | None:
    row = tx.typed(key, "list")
    if row is None:
        return None
    lo, n = row[3], row[4]
    tx.settle()
    rows = tx.cur.execute(_L_POP, (key, lo if left else lo + n - 1)).fetchall()
    tx.resize(key, row, n - 1, lo + 1 if left else None)
    return str(rows[0][0])


def op_lpop(tx: Tx, key: str) -> str | None:
    return _pop(tx, key, True)


def op_rpop(tx: Tx, key: str) -> str | None:
    return _pop(tx, key, False)


# -- sorted sets -----------------------------------------------------------------------------
def upsert_members(tx: Tx, key: str, kind: str, mapping: dict[str, object], sql: tuple[str, str, str]) -> int:
    """Insert or update the members of a hash or zset; returns how many were new.

    ``sql`` = (insert, insert-or-ignore, update): a new container takes plain inserts; an existing
    one inserts what is new and updates the rest only when some member already existed.
    """
    if not mapping:
        return 0
    insert, insert_ignore, update = sql
    row = tx.container(key, kind)
    n = row[4]
    cur = tx.cur
    if n == 0:
        cur.executemany(insert, [(key, m, v) for m, v in mapping.items()])
        new = len(mapping)
    else:
        new = cur.executemany(insert_ignore, [(key, m, v) for m, v in mapping.items()]).rowcount
        if new < len(mapping):
            cur.executemany(update, [(v, key, m) for m, v in mapping.items()])
    if new:
        tx.resize(key, row, n + new)
    return int(new)


def op_zadd(tx: Tx, key: str, mapping: dict[str, float]) -> int:
    scores: dict[str, object] = {m: float(s) for m, s in mapping.items()}  # raw ops may carry ints
    return upsert_members(tx, key, "zset", scores, _Z_UPSERT)


def remove_members(tx: Tx, key: str, kind: str, delete: str, members: tuple[str, ...]) -> int:
    """Remove members (or fields) of a hash, set or zset with the ``delete`` statement; returns
    how many existed. A container left empty no longer exists.

    Raises:
        WrongType: ``key`` holds another type.
    """
    row = tx.typed(key, kind)
    if row is None or not members:
        return 0
    count = tx.cur.executemany(delete, [(key, m) for m in dict.fromkeys(members)]).rowcount
    if count:
        tx.resize(key, row, row[4] - count)
    return int(count)


def op_zrem(tx: Tx, key: str, *members: str) -> int:
    return remove_members(tx, key, "zset", _Z_DELETE, members)


def op_zscore(tx: Tx, key: str, member: str) -> float | None:
    if tx.typed(key, "zset") is None:
        return None
    row = tx.cur.execute(_Z_SCORE, (key, member)).fetchone()
    return None if row is None else float(row[0])


def op_zcard(tx: Tx, key: str) -> int:
    row = tx.typed(key, "zset")
    return 0 if row is None else int(row[4])


def op_zrange(tx: Tx, key: str, start: int, stop: int, desc: bool) -> list[tuple[str, float]]:
    row = tx.typed(key, "zset")
    if row is None:
        return []
    n = row[4]
    a, b = sem.slice_bounds(start, stop, n)
    if a == b:
        return []
    # SQLite's OFFSET walks the skipped rows, so read from whichever end is nearer the range.
    if a <= n - b:
        rows = tx.cur.execute(_Z_DESC if desc else _Z_ASC, (key, b - a, a)).fetchall()
    else:
        rows = tx.cur.execute(_Z_ASC if desc else _Z_DESC, (key, b - a, n - b)).fetchall()
        rows.reverse()
    return [(m, float(s)) for m, s in rows]


def op_zrangebyscore(
    tx: Tx, key: str, low: float, high: float, desc: bool, offset: int, count: int | None
) -> list[tuple[str, float]]:
    if tx.typed(key, "zset") is None:
        return []
    sql = _Z_BY_SCORE_DESC if desc else _Z_BY_SCORE
    end = None if count is None or count < 0 else offset + count
    if offset < 0:  # counted from the end of the range (Python slicing, as on every engine)
        rows = tx.cur.execute(sql, (key, float(low), float(high), -1, 0)).fetchall()[offset:end]
    else:
        limit = -1 if end is None else count
        rows = tx.cur.execute(sql, (key, float(low), float(high), limit, offset)).fetchall()
    return [(m, float(s)) for m, s in rows]
