"""The seam commands on the memory engine's dicts: one ``op_<name>(tx, *args)`` per command.

:data:`OPS` maps every command of the table (``engines.commands``) to its handler and is checked
complete at import. Handlers record an undo step for each change in ``tx`` (see ``tx``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .. import _local_ops
from .. import _semantics as sem
from ..base import Number
from ..commands import handler_map
from . import sequences as _memory_sequences
from .tx import Entry, Tx, Undo

__all__ = ["OPS"]


# -- keys --------------------------------------------------------------------------------
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


# -- notifications ---------------------------------------------------------------------------
def op_publish(tx: Tx, channel: str, message: str) -> None:
    tx.published.append((channel, message))  # delivered after the batch applied


def _hash_undo(fields: dict[str, str], field: str, old: str | None) -> Undo:
    def undo() -> None:
        if old is None:
            fields.pop(field, None)
        else:
            fields[field] = old

    return undo


OPS: Final[dict[str, Callable[..., Any]]] = handler_map(
    {**vars(_local_ops), **vars(_memory_sequences), **globals()}, "op_", "memory engine"
)
