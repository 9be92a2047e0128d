"""Lists and sorted sets on the memory engine: ``op_<name>(tx, *args)`` for the ordered containers.

Part of the memory engine's handler map (``ops.OPS``); each change records its undo step.
"""

from __future__ import annotations

import bisect

from .. import _semantics as sem
from .tx import Tx, Undo, ZSet


# -- lists -------------------------------------------------------------------------------
def op_rpush(tx: Tx, key: str, *values: str) -> int:
    if not values:  # pushing nothing must not leave an empty list behind
        return op_llen(tx, key)
    entry = tx.container(key, "list")
    items: list[str] = entry.value
    items.extend(values)
    count = len(values)
    tx.undo.append(lambda: items.__delitem__(slice(len(items) - count, None)))
    return len(items)


def op_lpush(tx: Tx, key: str, *values: str) -> int:
    if not values:  # pushing nothing must not leave an empty list behind
        return op_llen(tx, key)
    entry = tx.container(key, "list")
    items: list[str] = entry.value
    items[:0] = reversed(values)
    count = len(values)
    tx.undo.append(lambda: items.__delitem__(slice(0, count)))
    return len(items)


def op_lrange(tx: Tx, key: str, start: int, stop: int) -> list[str]:
    entry = tx.typed(key, "list")
    if entry is None:
        return []
    lo, hi = sem.slice_bounds(start, stop, len(entry.value))
    return list(entry.value[lo:hi])


def op_llen(tx: Tx, key: str) -> int:
    entry = tx.typed(key, "list")
    return 0 if entry is None else len(entry.value)


def op_lindex(tx: Tx, key: str, index: int) -> str | None:
    entry = tx.typed(key, "list")
    if entry is None:
        return None
    items: list[str] = entry.value
    return items[index] if -len(items) <= index < len(items) else None


def op_ltrim(tx: Tx, key: str, start: int, stop: int) -> None:
    entry = tx.typed(key, "list")
    if entry is None:
        return
    items: list[str] = entry.value
    lo, hi = sem.slice_bounds(start, stop, len(items))
    head, tail = items[:lo], items[hi:]
    del items[hi:]
    del items[:lo]

    def restore() -> None:
        items[:0] = head
        items.extend(tail)

    tx.undo.append(restore)
    tx.drop_if_empty(key, entry)


def op_lpop(tx: Tx, key: str) -> str | None:
    entry = tx.typed(key, "list")
    if entry is None:
        return None
    items: list[str] = entry.value
    value = items.pop(0)
    tx.undo.append(lambda: items.insert(0, value))
    tx.drop_if_empty(key, entry)
    return value


def op_rpop(tx: Tx, key: str) -> str | None:
    entry = tx.typed(key, "list")
    if entry is None:
        return None
    items: list[str] = entry.value
    value = items.pop()
    tx.undo.append(lambda: items.append(value))
    tx.drop_if_empty(key, entry)
    return value


# -- sorted sets -------------------------------------------------------------------------
def op_zadd(tx: Tx, key: str, mapping: dict[str, float]) -> int:
    if not mapping:
        return 0
    entry = tx.container(key, "zset")
    zset: ZSet = entry.value
    new = 0
    for member, score in mapping.items():
        old = zset.add(member, float(score))  # raw ops may carry int scores; engines store floats
        new += old is None
        tx.undo.append(_zset_undo(zset, member, old))
    return new


def op_zrem(tx: Tx, key: str, *members: str) -> int:
    entry = tx.typed(key, "zset")
    if entry is None:
        return 0
    zset: ZSet = entry.value
    count = 0
    for member in dict.fromkeys(members):
        old = zset.remove(member)
        if old is not None:
            count += 1
            tx.undo.append(_zset_undo(zset, member, old))
    tx.drop_if_empty(key, entry)
    return count


def op_zscore(tx: Tx, key: str, member: str) -> float | None:
    entry = tx.typed(key, "zset")
    return None if entry is None else entry.value.scores.get(member)


def op_zcard(tx: Tx, key: str) -> int:
    entry = tx.typed(key, "zset")
    return 0 if entry is None else len(entry.value)


def op_zrange(tx: Tx, key: str, start: int, stop: int, desc: bool) -> list[tuple[str, float]]:
    entry = tx.typed(key, "zset")
    if entry is None:
        return []
    order: list[tuple[float, str]] = entry.value.order
    lo, hi = sem.slice_bounds(start, stop, len(order))
    if desc:
        n = len(order)
        picked = order[n - hi : n - lo][::-1]
    else:
        picked = order[lo:hi]
    return [(m, s) for s, m in picked]


def op_zrangebyscore(
    tx: Tx,
    key: str,
    low: float,
    high: float,
    desc: bool,
    offset: int,
    count: int | None,
) -> list[tuple[str, float]]:
    entry = tx.typed(key, "zset")
    if entry is None or low > high:
        return []
    low, high = float(low), float(high)  # int bounds compare as doubles, as on Redis
    order: list[tuple[float, str]] = entry.value.order
    lo = bisect.bisect_left(order, low, key=lambda item: item[0])
    hi = bisect.bisect_right(order, high, key=lambda item: item[0])
    picked = order[lo:hi]
    if desc:
        picked = picked[::-1]
    end = None if count is None or count < 0 else offset + count
    return [(m, s) for s, m in picked[offset:end]]


def _zset_undo(zset: ZSet, member: str, old: float | None) -> Undo:
    def undo() -> None:
        if old is None:
            zset.remove(member)
        else:
            zset.add(member, old)

    return undo
