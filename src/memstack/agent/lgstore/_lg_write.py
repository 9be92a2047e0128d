"""Writes of the LangGraph store: put, delete and TTL refresh, one guarded batch each.

A put reads the item's old record (for ``created_at`` and the guard) together with what its
batch needs to keep counts exact, in one read batch, then writes everything in one batch
guarded by ``require_equal(item, old)``: the record (with the engine's TTL), the ``ids`` set,
the vectors, the expiry zset, the registry (when the namespace may be new to it) and the change log.
A concurrent writer of the same key makes the guard fail; the put then reads and tries again.
Up to :data:`PRUNE` expired items of the namespace are pruned by the same batch (each guarded
by ``require_missing``), so counts and sets do not keep growing with expired items.

A write that may be the namespace's first (its count read as 0) registers it; on a Redis Cluster
the registry lives in another slot, so that happens in a batch of its own before the write
(crash-safe: the registry never shrinks, and a namespace is listed only while its count is positive).

A put without a TTL into a namespace whose process cache (:mod:`._lg_cache`) is warm and holds
no TTL item skips the read: the cache already knows the old record and the counts, and the write
batch is guarded by the namespace's epoch and version instead of the item (every change of a
namespace is logged, so equal means unchanged since the cache was filled). The cache then takes
the write itself. Another writer of the namespace makes that guard fail; the put then refreshes
the cache and goes the reading way. A put into an empty namespace warms its cache afterwards, so
the next ones skip their read (``bench/langgraph_store.py``'s put phase).
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from ...engines import Engine
from ...engines.base import Batch
from ...foundation.errors import Conflict, EngineError
from ...foundation.limits import short_repr
from ...index import codec
from ...index.changelog import log_change
from ...index.mirror import decoded
from ._lg_cache import Cached, NamespaceCache
from ._lg_layout import (
    NamespaceKeys,
    Record,
    RegistryKeys,
    decode_record,
    encode_record,
    now_datetime,
    ttl_ms,
)

__all__ = ["ATTEMPTS", "PRUNE", "delete_item", "put_item", "queue_prune", "refresh_ttl"]

log = logging.getLogger("memstack.doors.integrations.langgraph")

ATTEMPTS: Final = 16
"""Optimistic retries of one write racing other writers of the same key."""
PRUNE: Final = 8
"""Expired items of the namespace a write removes for good, at most."""
PRUNE_GRACE_MS: Final = 5_000
"""Only items expired this long ago are pruned: a Redis server whose clock runs behind ours may
still hold a key we think expired, and its prune guard would fail the write."""


class _Seen:
    """What the read before a write found."""

    def __init__(self, engine: Engine, keys: NamespaceKeys, key: str, prune: bool) -> None:
        batch = engine.batch()
        batch.get(keys.item(key))
        batch.zscore(keys.expiry, key)
        batch.zrangebyscore(keys.expiry, -math.inf, engine.now_ms() - PRUNE_GRACE_MS, count=PRUNE + 1)
        batch.get(keys.scope.version)
        batch.scard(keys.scope.ids)
        batch.zcard(keys.expiry)
        result = batch.execute()
        self.raw: str | None = result[0]
        self.old = decoded(decode_record, self.raw)  # not a record: the put replaces it, guarded
        # An expired item is still counted (and in the ids set) until pruned or re-put.
        self.counted = self.raw is not None or result[1] is not None
        # Pruning is left to the first attempt: a retry must not fail on another item's guard.
        self.expired = [k for k, _ in result[2] if k != key][:PRUNE] if prune else []
        self.version = int(result[3] or 0)
        self.count = int(result[4] or 0)
        self.expiring = int(result[5])


@dataclass(frozen=True, slots=True)
class _Put:
    """One put's item as its write stores it: ``px`` its TTL in milliseconds, ``payload`` its
    encoded vectors (None: no TTL, not embedded)."""

    key: str
    value: Mapping[str, Any]
    ttl: float | None
    vectors: codec.Matrix | None
    px: int | None
    payload: str | None

    @classmethod
    def of(cls, key: str, value: Mapping[str, Any], ttl: float | None, vectors: codec.Matrix | None) -> _Put:
        payload = None if vectors is None or not len(vectors) else codec.encode(vectors)
        return cls(key, value, ttl, vectors, None if ttl is None else ttl_ms(ttl), payload)

    def record(self, old: Record | None, now: datetime, seq: int, expires_ms: int | None = None) -> Record:
        """The record written over ``old`` (None: a new item, numbered ``seq``): an update keeps
        the item's creation time and its place in the namespace."""
        return Record(
            value=dict(self.value),
            created_at=now if old is None else old.created_at,
            updated_at=now,
            seq=seq if old is None else old.seq,
            ttl=self.ttl,
            expires_ms=expires_ms,
            vectors=self.payload is not None,
        )


def put_item(
    engine: Engine,
    keys: NamespaceKeys,
    key: str,
    value: Mapping[str, Any],
    ttl: float | None,
    vectors: codec.Matrix | None,
    cache: NamespaceCache | None = None,
) -> None:
    """Store ``value`` under ``key`` (``vectors``: its embedded rows, None = not embedded;
    ``cache``: the namespace's process cache, which lets the put skip its read when warm).

    Raises:
        InvalidValue: the value is not JSON, or a bad ``ttl``.
        Conflict: the key kept changing under :data:`ATTEMPTS` concurrent writes.
        EngineError: the engine failed.
    """
    put = _Put.of(key, value, ttl, vectors)
    if cache is not None and put.px is None:
        with cache.lock:
            if cache.guardable():
                if _put_known(engine, keys, put, cache):
                    return
                cache.refresh(engine, keys.scope)  # learn the other write: the next put is quick again
    for attempt in range(ATTEMPTS):
        seen = _Seen(engine, keys, key, prune=attempt == 0)
        expires_ms = None if put.px is None else engine.now_ms() + put.px
        record = put.record(seen.old, now_datetime(engine), seen.version + 1, expires_ms)
        batch = engine.batch()
        first = seen.count <= 0 and not seen.counted
        _queue_put(engine, batch, keys, put, seen, record)
        if batch.execute().applied:
            if cache is not None and first:
                _warm(engine, keys, cache)
            return
    raise Conflict(f"LangGraph item {short_repr(key)}: changed concurrently {ATTEMPTS} times; put abandoned")


def _queue_put(
    engine: Engine, batch: Batch, keys: NamespaceKeys, put: _Put, seen: _Seen, record: Record
) -> None:
    """The guarded write of ``record`` over what ``seen`` read: the item, its id, its vectors and
    its expiry, each added or dropped as the old version had it."""
    old, key, px, payload = seen.old, put.key, put.px, put.payload
    batch.require_equal(keys.item(key), seen.raw)
    queue_prune(batch, keys, seen.expired)
    first = seen.count <= 0 and not seen.counted
    _register(engine, keys, first, px is not None and not seen.expiring, batch)
    batch.set(keys.item(key), encode_record(record), px=px)
    if not seen.counted:
        batch.sadd(keys.scope.ids, key)
    if payload is not None:
        batch.hset(keys.scope.vectors, {key: payload})
    elif seen.counted and (old is None or old.vectors):
        batch.hdel(keys.scope.vectors, key)
    if record.expires_ms is not None:
        batch.zadd(keys.expiry, {key: float(record.expires_ms)})
    elif seen.counted and (old is None or old.ttl is not None):
        batch.zrem(keys.expiry, key)
    log_change(batch, keys.scope, "put", key)


def _put_known(engine: Engine, keys: NamespaceKeys, put: _Put, cache: NamespaceCache) -> bool:
    """A put without a TTL from what the warm ``cache`` knows, in one batch guarded by the
    namespace's epoch and version; False (nothing written) when the namespace changed since."""
    key, payload = put.key, put.payload
    cached = cache.items.get(key)
    old = None if cached is None else cached.record
    record = put.record(old, now_datetime(engine), cache.version + 1)
    raw = encode_record(record)
    epoch = cache.epoch or uuid.uuid4().hex
    batch = engine.batch()
    batch.require_equal(keys.scope.epoch, cache.epoch)
    batch.require_equal(keys.scope.version, str(cache.version) if cache.version else None)
    _register(engine, keys, not cache.items, False, batch)
    batch.set(keys.item(key), raw)
    if old is None:
        batch.sadd(keys.scope.ids, key)
    if payload is not None:
        batch.hset(keys.scope.vectors, {key: payload})
    elif old is not None and old.vectors:
        batch.hdel(keys.scope.vectors, key)
    log_change(batch, keys.scope, "put", key, epoch, known=cache.epoch is not None, after=cache.version)
    if not batch.execute().applied:
        return False
    cache.wrote(cache.version + 1, epoch, key, Cached(raw, record), None if payload is None else put.vectors)
    return True


def _warm(engine: Engine, keys: NamespaceKeys, cache: NamespaceCache) -> None:
    """Fill the cold cache of a namespace that held nothing before this put (cheap: it holds
    about one item), so the next puts skip their read. The put is done: a failure only logs."""
    with cache.lock:
        if cache.fresh:
            return
        try:
            cache.refresh(engine, keys.scope)
        except EngineError as exc:
            log.debug("namespace cache not warmed after a put: %s", exc)


def delete_item(engine: Engine, keys: NamespaceKeys, key: str) -> None:
    """Delete ``key`` (a no-op when absent).

    Raises:
        Conflict: as :func:`put_item`.
        EngineError: the engine failed.
    """
    for attempt in range(ATTEMPTS):
        seen = _Seen(engine, keys, key, prune=attempt == 0)
        if not seen.counted and not seen.expired:
            return
        batch = engine.batch()
        batch.require_equal(keys.item(key), seen.raw)
        queue_prune(batch, keys, seen.expired)
        if seen.counted:
            _queue_removal(batch, keys, key)
        if batch.execute().applied:
            return
    raise Conflict(
        f"LangGraph item {short_repr(key)}: changed concurrently {ATTEMPTS} times; delete abandoned"
    )


def refresh_ttl(engine: Engine, keys: NamespaceKeys, key: str, raw: str) -> None:
    """Count the TTL of the item stored as ``raw`` again from now (LangGraph's ``refresh_ttl``,
    a documented write); nothing when the item changed meanwhile (that write set its own TTL).

    Raises:
        EngineError: the engine failed.
    """
    record = decode_record(raw)
    if record.ttl is None:
        return
    fresh = record.refreshed(engine.now_ms())
    assert fresh.expires_ms is not None
    batch = engine.batch()
    batch.require_equal(keys.item(key), raw)
    batch.set(keys.item(key), encode_record(fresh), px=ttl_ms(record.ttl))
    batch.zadd(keys.expiry, {key: float(fresh.expires_ms)})
    log_change(batch, keys.scope, "put", key)  # every cache learns the new expire-at
    batch.execute()


def _queue_removal(batch: Batch, keys: NamespaceKeys, key: str) -> None:
    batch.delete(keys.item(key))
    batch.srem(keys.scope.ids, key)
    batch.hdel(keys.scope.vectors, key)
    batch.zrem(keys.expiry, key)
    log_change(batch, keys.scope, "del", key)


def queue_prune(batch: Batch, keys: NamespaceKeys, expired: list[str]) -> None:
    """Guards first (a batch's guards precede its writes), then the removals."""
    for key in expired:
        batch.require_missing(keys.item(key))
    for key in expired:
        _queue_removal(batch, keys, key)


def _register(engine: Engine, keys: NamespaceKeys, names: bool, ttls: bool, batch: Batch) -> None:
    """Register a namespace its count says may be new to the registry (``names``; a positive
    count means a write registered it before), and one getting its first TTL item (``ttls``).

    On a cluster the registry is in another slot: registered in a batch of its own, before the
    write (crash-safe: the registry never shrinks); otherwise in the write's own batch.
    """
    if not names and not ttls:
        return
    registry = RegistryKeys.of(engine)
    target = engine.batch() if engine.clustered else batch
    if names:
        target.sadd(registry.names, keys.code)
    if ttls:
        target.sadd(registry.ttls, keys.code)
    target.set(registry.epoch, uuid.uuid4().hex, nx=True)
    target.incr(registry.version)
    if engine.clustered:
        target.execute()
