"""The in-process search cache of one scope, kept fresh from the engine's change log.

Each process holds, per (engine identity, scope), a snapshot of the scope's entries, one BM25
index per profile and the decoded vectors. A search first reads the scope's version and epoch
(one call). Same epoch and version: the cache is fresh. Same epoch, newer version: the logged
changes since the cached version are applied (only those ids are re-read). Otherwise (a new
epoch after a flush, or a log trimmed past the cached version) the cache is rebuilt.

Reading the version *before* the data is what keeps this safe without locks across processes:
a change made after the read is logged under a later version and applied on the next search.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Final, cast

from ..engines import Engine
from ..errors import InvalidValue
from ..search import Bm25Index
from ..search.thread_table import ThreadTable
from ..shared.mirror import changed_ids as changes_since  # one rule for every change log
from .context import ConversationThreads
from .entry import MemoryEntry, from_json
from .filter_index import FilterIndex
from .layout import ScopeKeys
from .query import document_text
from .snapshot import SNAPSHOT_PROFILE, Snapshot
from .vectors import StoredVector, decode_vector

__all__ = ["MAX_CACHED_SCOPES", "ScopeCache", "changes_since", "logged_changes", "scope_cache"]

log = logging.getLogger("memstack.longterm")

APPLY_CHUNK: Final = 2000
"""Entries read per engine call while (re)building a cache."""

MAX_CACHED_SCOPES: Final = 256
"""Scopes whose caches one process keeps (least recently used dropped first)."""


class ScopeCache:
    """Entries, BM25 indexes and vectors of one scope, as of ``version`` under ``epoch``."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.lock = threading.RLock()
        self.epoch: str | None = None
        self.version = -1
        self.entries: dict[str, MemoryEntry] = {}
        self.texts: dict[str, str] = {}
        self.vectors: dict[str, StoredVector] = {}
        self.indexes: dict[str, Bm25Index] = {}
        self.filters = FilterIndex()
        self.threads = ConversationThreads()
        self.derived: dict[object, object] = {}  # e.g. vector matrices; cleared on every change
        self.warned: set[str] = set()
        self.warm = False  # the last refresh completed: the cache is the scope as of ``version``
        # Cold start (see .cold): a snapshot-restored index answering plain BM25 searches until the
        # cache is built; guarded by ``cold_lock`` so that those searches never wait for ``lock``.
        self.cold_lock = threading.Lock()
        self.cold: Snapshot | None = None

    # -- freshness ---------------------------------------------------------------------------
    def refresh(self, engine: Engine, keys: ScopeKeys) -> None:
        """Bring the cache up to the engine's current version (caller holds :attr:`lock`).

        Raises:
            EngineError: the engine failed; the cache then rebuilds on the next call.
        """
        try:
            self._refresh(engine, keys)
        except BaseException:
            self.version = -1  # half-applied changes must never pass for a fresh cache
            self.warm = False
            raise
        if not self.warm:
            with self.cold_lock:
                self.warm, self.cold = True, None

    def _refresh(self, engine: Engine, keys: ScopeKeys) -> None:
        # No epoch: the scope was never written or was wiped; a read must not create one (the
        # next write does, in its own batch: layout.log_change). tests/test_reads_never_write.py
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
        self.entries, self.texts, self.vectors = {}, {}, {}
        self.indexes = {}
        self.filters = FilterIndex()
        self.threads = ConversationThreads()
        self.derived = {}
        self._apply(engine, keys, sorted(result[1]))
        if self.cold is not None:
            adopt(engine, keys, self)

    def _apply(self, engine: Engine, keys: ScopeKeys, ids: Sequence[str]) -> None:
        if not ids:
            return
        self.derived = {}
        changed: list[str] = []
        # In chunks, so a rebuild of a big scope never holds the engine for seconds (a cold search
        # answered from a snapshot meanwhile waits for no more than one chunk: longterm/cold.py).
        for start in range(0, len(ids), APPLY_CHUNK):
            chunk = ids[start : start + APPLY_CHUNK]
            batch = engine.batch()
            batch.mget([keys.entry(i) for i in chunk])
            batch.hmget(keys.vectors, chunk)
            result = batch.execute()
            self._take(chunk, result[0], result[1], changed)
        if changed:
            self.threads.apply(changed, self.entries)

    def _take(
        self,
        ids: Sequence[str],
        raw_entries: Sequence[str | None],
        raw_vectors: Sequence[str | None],
        changed: list[str],
    ) -> None:
        for entry_id, raw, raw_vector in zip(ids, raw_entries, raw_vectors, strict=True):
            old_text = self.texts.get(entry_id)
            entry = None if raw is None else _parse(entry_id, raw)
            if entry != self.entries.get(entry_id):
                changed.append(entry_id)
                if entry is None:
                    self.filters.remove(entry_id)
                else:
                    self.filters.add(entry)
            if entry is None:
                self.entries.pop(entry_id, None)
                self.texts.pop(entry_id, None)
                self.vectors.pop(entry_id, None)
                for index in self.indexes.values():
                    index.remove(entry_id)
                continue
            text = document_text(entry)
            self.entries[entry_id], self.texts[entry_id] = entry, text
            vector = decode_vector(raw_vector) if raw_vector is not None else None
            if vector is None:
                self.vectors.pop(entry_id, None)
            else:
                self.vectors[entry_id] = vector
            if text != old_text:
                for index in self.indexes.values():
                    index.remove(entry_id)
                    index.add(entry_id, text)

    # -- derived structures ------------------------------------------------------------------
    def index(self, profile: str) -> Bm25Index:
        """The BM25 index of ``profile`` over the cached entries (built on first use)."""
        index = self.indexes.get(profile)
        if index is None:
            index = Bm25Index(profile=profile)
            for entry_id, text in self.texts.items():
                index.add(entry_id, text)
            self.indexes[profile] = index
        return index

    def context_index(self, profile: str, window: int) -> Bm25Index:
        """The conversation-context index of BM25 ``profile`` and ``window`` (built on first use)."""
        return self.threads.index(profile, window, self.entries)

    def thread_table(self) -> ThreadTable:
        """The conversations as a :class:`~memstack.search.thread_table.ThreadTable`, kept in
        :attr:`derived` until the next change (built on first use: ~0.15 s at 100,000 turns)."""
        found = self.derived.get("thread_table")
        if found is None:
            found = self.derived["thread_table"] = self.threads.table()
        return cast(ThreadTable, found)  # derived holds what this method stored


def logged_changes(engine: Engine, keys: ScopeKeys, since: int) -> tuple[int, set[str] | None]:
    """The scope's version now and the ids its log shows changed after version ``since`` (None:
    the log no longer reaches back that far); one engine call.

    Raises:
        EngineError: the engine failed.
    """
    batch = engine.batch()
    batch.get(keys.version)
    batch.lrange(keys.log, 0, -1)
    result = batch.execute()
    version = int(result[0] or 0)
    return version, changes_since(since, version, result[1])


def adopt(engine: Engine, keys: ScopeKeys, cache: ScopeCache) -> None:
    """Give a cache that has just read every entry (a rebuild) the snapshot's index, so it is not
    built again from every text; the caller holds ``cache.lock``.

    The index is made to say exactly what ``cache.texts`` say: ids the log shows changed since the
    snapshot's version (read *after* the entries, so it covers every change they may reflect) are
    re-indexed from ``cache.texts``, then ids only one side has are added or removed. Later
    refreshes then compare texts as they always do.

    Raises:
        EngineError: the engine failed.
    """
    with cache.cold_lock:
        snap, cache.cold = cache.cold, None
    if not isinstance(snap, Snapshot) or snap.epoch != cache.epoch:
        return
    _, changed = logged_changes(engine, keys, snap.version)
    if changed is None:
        return
    index, texts = snap.index, cache.texts
    for entry_id in changed:
        index.remove(entry_id)
    for entry_id in index.ids():
        if entry_id not in texts:
            index.remove(entry_id)
    for entry_id, text in texts.items():
        if entry_id not in index:
            index.add(entry_id, text)
    cache.indexes[SNAPSHOT_PROFILE] = index


def _parse(entry_id: str, raw: str) -> MemoryEntry | None:
    try:
        return from_json(raw)
    except InvalidValue:
        log.warning("memory %r: stored JSON is not an entry; it is left out of searches", entry_id)
        return None


_caches: OrderedDict[tuple[str, str], ScopeCache] = OrderedDict()
_caches_lock = threading.Lock()


def scope_cache(engine: Engine, scope: str) -> ScopeCache:
    """The process-wide cache of ``scope`` on ``engine`` (shared by every instance on it)."""
    key = (engine.identity, scope)
    with _caches_lock:
        cache = _caches.get(key)
        if cache is None:
            cache = _caches[key] = ScopeCache(f"scope {scope!r}")
            while len(_caches) > MAX_CACHED_SCOPES:
                _caches.popitem(last=False)
        else:
            _caches.move_to_end(key)
        return cache
