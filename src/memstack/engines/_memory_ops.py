"""The seam commands on the memory engine's dicts: one ``op_<name>(tx, *args)`` per command.

:data:`OPS` maps every command of the table (``engines.commands``) to its handler and is checked
complete at import. Handlers record an undo step for each change in ``tx`` (see ``_memory_tx``).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any, Final

from . import _semantics as sem
from ._memory_tx import Entry, Tx, Undo, ZSet
from .base import Number
from .commands import handler_map

__all__ = ["OPS"]


# -- keys --------------------------------------------------------------------------------
def op_exists(tx: Tx, key: str) -> bool:
    return tx.live(key) is not None


def op_delete(tx: Tx, *keys: str) -> int:
    count = 0
    for key in dict.fromkeys(keys):
        if tx.live(key) is not None:
            tx.replace(key, None)
            count += 1
    return count


def op_pexpire(tx: Tx, key: str, ms: int) -> bool:
    entry = tx.live(key)
    if entry is None:
        return False
    if ms <= 0:
        tx.replace(key, None)
    else:
        tx.set_expire(key, entry, tx.now + ms)
    return True


def op_persist(tx: Tx, key: str) -> bool:
    entry = tx.live(key)
    if entry is None or entry.expire is None:
        return False
    tx.set_expire(key, entry, None)
    return True


def op_pttl(tx: Tx, key: str) -> int:
    entry = tx.live(key)
    if entry is None:
        return -2
    return -1 if entry.expire is None else entry.expire - tx.now


def op_copy_ttl(tx: Tx, src: str, *dsts: str) -> int:
    source = tx.live(src)
    if source is None or source.expire is None:
        return 0
    copied = 0
    for dst in dsts:
        target = tx.live(dst)
        if target is not None:
            tx.set_expire(dst, target, source.expire)
            copied += 1
    return copied


# -- strings -----------------------------------------------------------------------------
def op_get(tx: Tx, key: str) -> str | None:
    entry = tx.typed(key, "string")
    return None if entry is None else str(entry.value)


def op_mget(tx: Tx, *keys: str) -> list[str | None]:
    out: list[str | None] = []
    for key in keys:
        entry = tx.live(key)
        out.append(entry.value if entry is not None and entry.kind == "string" else None)
    return out


def op_set(
    tx: Tx,
    key: str,
    value: str,
    px: int | None,
    nx: bool,
    xx: bool,
    keepttl: bool,
) -> bool:
    old = tx.live(key)
    if (nx and old is not None) or (xx and old is None):
        return False
    if px is not None:
        expire: int | None = tx.now + px
    elif keepttl and old is not None:
        expire = old.expire
    else:
        expire = None
    tx.replace(key, Entry("string", value, expire))
    return True


def op_incr(tx: Tx, key: str, amount: Number) -> Number:
    entry = tx.typed(key, "string")
    total = sem.add_numbers(sem.parse_number(None if entry is None else entry.value, key), amount, key)
    tx.replace(key, Entry("string", sem.format_number(total), entry.expire if entry else None))
    return total


# -- hashes ------------------------------------------------------------------------------
def op_hset(tx: Tx, key: str, mapping: dict[str, str]) -> int:
    if not mapping:
        return 0
    entry = tx.container(key, "hash")
    fields: dict[str, str] = entry.value
    new = 0
    for field, value in mapping.items():
        old = fields.get(field)
        new += old is None
        fields[field] = value
        tx.undo.append(_hash_undo(fields, field, old))
    return new


def op_hget(tx: Tx, key: str, field: str) -> str | None:
    entry = tx.typed(key, "hash")
    return None if entry is None else entry.value.get(field)


def op_hmget(tx: Tx, key: str, *fields: str) -> list[str | None]:
    entry = tx.typed(key, "hash")
    values: dict[str, str] = {} if entry is None else entry.value
    return [values.get(f) for f in fields]


def op_hgetall(tx: Tx, key: str) -> dict[str, str]:
    entry = tx.typed(key, "hash")
    return {} if entry is None else dict(entry.value)


def op_hkeys(tx: Tx, key: str) -> list[str]:
    entry = tx.typed(key, "hash")
    return [] if entry is None else list(entry.value)


def op_hlen(tx: Tx, key: str) -> int:
    entry = tx.typed(key, "hash")
    return 0 if entry is None else len(entry.value)


def op_hdel(tx: Tx, key: str, *fields: str) -> int:
    entry = tx.typed(key, "hash")
    if entry is None:
        return 0
    values: dict[str, str] = entry.value
    count = 0
    for field in dict.fromkeys(fields):
        old = values.pop(field, None)
        if old is not None:
            count += 1
            tx.undo.append(_hash_undo(values, field, old))
    tx.drop_if_empty(key, entry)
    return count


def op_hincr(tx: Tx, key: str, field: str, amount: Number) -> Number:
    entry = tx.typed(key, "hash")
    current = None if entry is None else entry.value.get(field)
    total = sem.add_numbers(sem.parse_number(current, f"{key}.{field}"), amount, f"{key}.{field}")
    op_hset(tx, key, {field: sem.format_number(total)})
    return total


# -- sets --------------------------------------------------------------------------------
def op_sadd(tx: Tx, key: str, *members: str) -> int:
    if not members:
        return 0
    entry = tx.container(key, "set")
    values: set[str] = entry.value
    added = [m for m in dict.fromkeys(members) if m not in values]
    values.update(added)
    tx.undo.append(lambda: values.difference_update(added))
    return len(added)


def op_srem(tx: Tx, key: str, *members: str) -> int:
    entry = tx.typed(key, "set")
    if entry is None:
        return 0
    values: set[str] = entry.value
    removed = [m for m in dict.fromkeys(members) if m in values]
    values.difference_update(removed)
    tx.undo.append(lambda: values.update(removed))
    tx.drop_if_empty(key, entry)
    return len(removed)


def op_smembers(tx: Tx, key: str) -> set[str]:
    entry = tx.typed(key, "set")
    return set() if entry is None else set(entry.value)


def op_sismember(tx: Tx, key: str, member: str) -> bool:
    entry = tx.typed(key, "set")
    return entry is not None and member in entry.value


def op_scard(tx: Tx, key: str) -> int:
    entry = tx.typed(key, "set")
    return 0 if entry is None else len(entry.value)


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


# -- notifications ---------------------------------------------------------------------------
def op_publish(tx: Tx, channel: str, message: str) -> None:
    tx.published.append((channel, message))  # delivered after the batch applied


# -- guards ------------------------------------------------------------------------------
def op_require_exists(tx: Tx, key: str) -> bool:
    return tx.live(key) is not None


def op_require_missing(tx: Tx, key: str) -> bool:
    return tx.live(key) is None


def op_require_equal(tx: Tx, key: str, value: str | None) -> bool:
    entry = tx.live(key)
    if entry is None:
        return value is None
    return entry.kind == "string" and entry.value == value


def _hash_undo(fields: dict[str, str], field: str, old: str | None) -> Undo:
    def undo() -> None:
        if old is None:
            fields.pop(field, None)
        else:
            fields[field] = old

    return undo


def _zset_undo(zset: ZSet, member: str, old: float | None) -> Undo:
    def undo() -> None:
        if old is None:
            zset.remove(member)
        else:
            zset.add(member, old)

    return undo


OPS: Final[dict[str, Callable[..., Any]]] = handler_map(globals(), "op_", "memory engine")
