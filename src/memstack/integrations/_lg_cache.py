"""The in-process cache of one LangGraph namespace, kept fresh from the namespace's change log.

The same scheme as long-term memory's scope caches (:mod:`memstack.longterm.index_cache`): each
process holds, per (engine identity, namespace), the decoded records, one BM25 index and the
vectors. A search reads the namespace's version and epoch (one call); same epoch and version:
fresh; same epoch, newer version: only the keys logged since are re-read; otherwise (another
epoch, a log trimmed past the cached version) the cache is rebuilt from the ``ids`` set. Reading
the version before the data keeps this safe across processes without locks. A read never writes.

Items that expire (engine TTL) are not logged; the cache knows each record's expire-at and
leaves expired items out (:meth:`NamespaceCache.live`). A TTL refresh is a logged write.

The namespace registry is kept the same way (:func:`registry`): its version and epoch are read
in one call, the two sets only when a registration happened since.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from ..engines import Engine
from ..errors import InvalidValue
from ..longterm.index_cache import logged_changes  # one rule for every change log
from ..longterm.layout import ScopeKeys
from ..search import Bm25Index
from ._lg_embed import Matrix, decode_vectors
from ._lg_layout import NamespaceKeys, Record, RegistryKeys, decode_record
from ._lg_query import text_of

__all__ = ["MAX_CACHED_NAMESPACES", "Cached", "NamespaceCache", "clear_caches", "namespace_cache", "registry"]

log = logging.getLogger("memstack.integrations.langgraph")

MAX_CACHED_NAMESPACES: Final = 1024
"""Namespaces whose caches one process keeps (least recently used dropped first)."""


@dataclass(frozen=True, slots=True)
class Cached:
    """One cached item: its stored text (the guard of a TTL refresh) and its decoded record."""

    raw: str
    record: Record


class NamespaceCache:
    """Records, the BM25 index and the vectors of one namespace, as of ``version`` under ``epoch``."""

    def __init__(self, profile: str) -> None:
        self.lock = threading.RLock()
        self.profile = profile
        self.epoch: str | None = None
        self.version = -1
        self.items: dict[str, Cached] = {}
        self.vectors: dict[str, Matrix] = {}
        self._index = Bm25Index(profile=profile)
        # Keys whose text the index has not taken yet, in the order it would have: puts only
        # record them, the next query search indexes them (a put's own cost stays small).
        self._unindexed: dict[str, None] = {}
        self.derived: dict[object, object] = {}  # insertion order, filter results: cleared on change

    @property
    def index(self) -> Bm25Index:
        """The BM25 index of every cached item's text (caller holds :attr:`lock`)."""
        if self._unindexed:
            for key in self._unindexed:
                self._index.remove(key)
                cached = self.items.get(key)
                if cached is not None:
                    self._index.add(key, text_of(cached.record.value))
            self._unindexed = {}
        return self._index

    # -- freshness ---------------------------------------------------------------------------
    def refresh(self, engine: Engine, keys: NamespaceKeys) -> None:
        """Bring the cache up to the engine's current version (caller holds :attr:`lock`).

        Raises:
            EngineError: the engine failed; the cache then rebuilds on the next call.
        """
        try:
            self._refresh(engine, keys.scope)
        except BaseException:
            self.version = -1  # half-applied changes must never pass for a fresh cache
            raise

    def _refresh(self, engine: Engine, keys: ScopeKeys) -> None:
        raw_version, epoch = engine.mget([keys.version, keys.epoch])
        version = int(raw_version or 0)
        if epoch != self.epoch or self.version < 0:
            self._rebuild(engine, keys, epoch)
            return
        if version == self.version:
            return
        version, changed = logged_changes(engine, keys, self.version)
        if changed is None:
            self._rebuild(engine, keys, epoch)
            return
        self._apply(engine, keys, sorted(changed))
        self.version = version

    def _rebuild(self, engine: Engine, keys: ScopeKeys, epoch: str | None) -> None:
        batch = engine.batch()
        batch.get(keys.version)
        batch.smembers(keys.ids)
        result = batch.execute()
        self.epoch, self.version = epoch, int(result[0] or 0)
        self.items, self.vectors, self.derived = {}, {}, {}
        self._index, self._unindexed = Bm25Index(profile=self.profile), {}
        self._apply(engine, keys, sorted(result[1]))

    def _apply(self, engine: Engine, keys: ScopeKeys, ids: Sequence[str]) -> None:
        if not ids:
            return
        self.derived = {}
        batch = engine.batch()
        batch.mget([keys.entry(i) for i in ids])
        batch.hmget(keys.vectors, ids)
        result = batch.execute()
        for key, raw, payload in zip(ids, result[0], result[1], strict=True):
            self._take(key, raw, payload)

    def _take(self, key: str, raw: str | None, payload: str | None) -> None:
        old = self.items.get(key)
        if old is not None and old.raw == raw:
            return
        record = None if raw is None else _parse(key, raw)
        if record is None or raw is None:
            self.items.pop(key, None)
            self.vectors.pop(key, None)
            self._reindex(key)
            return
        vectors = decode_vectors(payload) if payload is not None and record.vectors else None
        self._store(key, Cached(raw, record), vectors)

    # -- this process's own writes -------------------------------------------------------------
    def guardable(self) -> bool:
        """True if a put may trust this cache instead of reading first (caller holds :attr:`lock`).

        The put then guards on the namespace's epoch and version: equal, nothing changed since the
        cache was filled. Not for a cold cache, nor for a namespace holding items with a TTL: they
        expire without a logged change, so the cache cannot vouch for what is live.
        """
        return self.version >= 0 and not self._expiring()

    def wrote(self, version: int, epoch: str, key: str, cached: Cached, vectors: Matrix | None) -> None:
        """Take this process's own put of ``key``, which a guard proved was the namespace's only
        change since the cache's version (caller holds :attr:`lock`)."""
        self.derived = {"expiring": cached.record.expires_ms is not None}  # it was False before
        self.epoch, self.version = epoch, version
        self._store(key, cached, vectors)

    def _store(self, key: str, cached: Cached, vectors: Matrix | None) -> None:
        old = self.items.get(key)
        self.items[key] = cached
        if vectors is None:
            self.vectors.pop(key, None)
        else:
            self.vectors[key] = vectors
        if old is None or text_of(old.record.value) != text_of(cached.record.value):
            self._reindex(key)

    def _reindex(self, key: str) -> None:
        self._unindexed.pop(key, None)  # last in the order, as removing and adding at once would
        self._unindexed[key] = None

    # -- views -------------------------------------------------------------------------------
    def live(self, now_ms: int) -> list[str]:
        """Live keys in first-insertion order (expired items left out)."""
        order = self._order()
        if not self._expiring():
            return order
        return [k for k in order if _alive(self.items[k].record, now_ms)]

    def _expiring(self) -> bool:
        """True if some cached item has a TTL (kept until the next change)."""
        expiring = self.derived.get("expiring")
        if expiring is None:
            expiring = self.derived["expiring"] = any(
                c.record.expires_ms is not None for c in self.items.values()
            )
        return bool(expiring)

    def _order(self) -> list[str]:
        """Every cached key in first-insertion order (kept until the next change)."""
        order = self.derived.get("order")
        if order is None:
            order = self.derived["order"] = sorted(self.items, key=lambda k: (self.items[k].record.seq, k))
        assert isinstance(order, list)
        return order

    def vector_rows(self, dims: int) -> tuple[list[str], Matrix, np.ndarray]:
        """``(keys, rows, starts)``: every item's vectors of ``dims`` stacked; the rows of
        ``keys[i]`` start at ``starts[i]`` (cached until the next change)."""
        found = self.derived.get(("rows", dims))
        if found is None:
            # Insertion order, so that equal cosines keep it (as LangGraph's stable sort does).
            keys = [k for k in self._order() if (m := self.vectors.get(k)) is not None and m.shape[1] == dims]
            keys = [k for k in keys if len(self.vectors[k])]
            blocks = [self.vectors[k] for k in keys]
            rows = np.vstack(blocks) if blocks else np.zeros((0, dims), dtype=np.float32)
            starts = np.cumsum([0] + [len(b) for b in blocks[:-1]]) if blocks else np.zeros(0, dtype=np.int64)
            found = self.derived[("rows", dims)] = (keys, rows, starts)
        assert isinstance(found, tuple)
        return found


def _alive(record: Record, now_ms: int) -> bool:
    return record.expires_ms is None or now_ms < record.expires_ms


def _parse(key: str, raw: str) -> Record | None:
    try:
        return decode_record(raw)
    except InvalidValue:
        log.warning("LangGraph item %r: stored JSON is not a record; it is left out of searches", key)
        return None


_caches: OrderedDict[tuple[str, str, str], NamespaceCache] = OrderedDict()
_caches_lock = threading.Lock()


def namespace_cache(engine: Engine, code: str, profile: str) -> NamespaceCache:
    """The process-wide cache of namespace ``code`` on ``engine`` (shared by every store on it)."""
    key = (engine.identity, code, profile)
    with _caches_lock:
        cache = _caches.get(key)
        if cache is None:
            cache = _caches[key] = NamespaceCache(profile)
            while len(_caches) > MAX_CACHED_NAMESPACES:
                _caches.popitem(last=False)
        else:
            _caches.move_to_end(key)
        return cache


@dataclass(slots=True)
class _Registry:
    epoch: str | None = None
    version: int = -1
    names: frozenset[str] = frozenset()
    ttls: frozenset[str] = frozenset()


_registries: dict[str, _Registry] = {}
_registries_lock = threading.Lock()


def registry(engine: Engine) -> tuple[frozenset[str], frozenset[str]]:
    """``(namespaces ever used, those that ever held a TTL item)``, from the process's copy when
    the registry's version and epoch (one call) say it is current."""
    keys = RegistryKeys.of(engine)
    raw_version, epoch = engine.mget([keys.version, keys.epoch])
    with _registries_lock:
        cached = _registries.get(engine.identity)
    if cached is not None and cached.epoch == epoch and cached.version == int(raw_version or 0):
        return cached.names, cached.ttls
    batch = engine.batch()
    batch.get(keys.version)
    batch.get(keys.epoch)
    batch.smembers(keys.names)
    batch.smembers(keys.ttls)
    result = batch.execute()
    fresh = _Registry(result[1], int(result[0] or 0), frozenset(result[2]), frozenset(result[3]))
    with _registries_lock:
        _registries[engine.identity] = fresh
    return fresh.names, fresh.ttls


def clear_caches() -> None:
    """Forget every cached namespace (tests simulate another process with it)."""
    with _caches_lock:
        _caches.clear()
    with _registries_lock:
        _registries.clear()
