"""What every write of a long-term entry queues on its batch: the entry, its id, its expiry, its
history item and its change-log line, together (the store, the dream passes and undo use these,
so no writer forgets one of them).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...engines import Engine
from ...engines.base import Batch
from ...foundation.keyspace import register
from . import history
from .entry import MemoryEntry
from .layout import ScopeKeys, log_change

__all__ = ["drop", "put", "retire"]


def put(
    engine: Engine,
    batch: Batch,
    keys: ScopeKeys,
    scope: str,
    entry: MemoryEntry,
    raw: str,
    *,
    old_raw: str | None,
    op: str,
    actor: str,
    at: float,
    related: Sequence[str] = (),
) -> None:
    """Queue writing ``entry`` (stored as ``raw``) over ``old_raw`` with its history item ``op``.
    The vector is the caller's business (it knows whether the text changed)."""
    register(engine, batch, entry.subject, "long_term", scope, entry.id)
    batch.set(keys.entry(entry.id), raw)
    batch.sadd(keys.ids, entry.id)
    if entry.expires_at is not None:
        batch.zadd(keys.expiry, {entry.id: entry.expires_at.timestamp()})
    else:
        batch.zrem(keys.expiry, entry.id)
    history.append(
        batch, keys.history(entry.id), at=at, op=op, actor=actor, old=old_raw, new=raw, related=related
    )
    log_change(batch, keys, "put", entry.id)


def drop(batch: Batch, keys: ScopeKeys, ids: Sequence[str]) -> None:
    """Queue deleting the entries ``ids`` with their vectors, expiry and history (a deleted entry
    leaves nothing behind)."""
    if not ids:
        return
    batch.delete(*[keys.entry(i) for i in ids], *[keys.history(i) for i in ids])
    batch.srem(keys.ids, *ids)
    batch.hdel(keys.vectors, *ids)
    batch.zrem(keys.expiry, *ids)
    for entry_id in ids:
        log_change(batch, keys, "del", entry_id)


def retire(
    batch: Batch,
    keys: ScopeKeys,
    entry_id: str,
    old_raw: str,
    *,
    actor: str,
    at: float,
    keep_ms: int,
    related: Sequence[str] = (),
) -> None:
    """Queue retiring an entry into a dream pass's archive: it leaves the scope, its history
    records why and is kept as long as the archive (``keep_ms``)."""
    batch.delete(keys.entry(entry_id))
    batch.srem(keys.ids, entry_id)
    batch.hdel(keys.vectors, entry_id)
    batch.zrem(keys.expiry, entry_id)
    history.append(
        batch,
        keys.history(entry_id),
        at=at,
        op="retire",
        actor=actor,
        old=old_raw,
        new=None,
        related=related,
        keep_ms=keep_ms,
    )
    log_change(batch, keys, "del", entry_id)
