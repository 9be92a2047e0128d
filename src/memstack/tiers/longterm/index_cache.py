"""The in-process search cache of one scope: a :class:`~memstack.index.mirror.Mirror` of its entries.

Each process holds, per (engine identity, scope), a snapshot of the scope's entries, one BM25
index per profile, the decoded vectors and the filter postings, kept fresh from the scope's change
log by the index kit (:mod:`memstack.index.mirror`): a search first reads the scope's version and
epoch (one call) and takes only the entries logged as changed since its version.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import numpy as np
import numpy.typing as npt

from ...engines import Engine
from ...index import registry
from ...index.ann import AnnIndex
from ...index.changelog import SetKeys, changes_since
from ...index.mirror import Mirror, Row, Seen, decoded
from ...index.vectors import VectorIndex
from ...search import Bm25Index
from ...search.thread_table import ThreadTable
from .context import ConversationThreads
from .entry import MemoryEntry, from_json
from .export import Export, catch_up
from .filter_index import FilterIndex
from .query import document_text
from .snapshot import SNAPSHOT_PROFILE, Snapshot
from .validity import ValidityIndex, View
from .vectors import StoredVector, decode_vector, text_hash

__all__ = ["ScopeCache", "adopt", "changes_since", "clear_caches", "scope_cache", "scope_caches"]

log = logging.getLogger("memstack.tiers.longterm")


class ScopeCache(Mirror):
    """Entries, BM25 indexes and vectors of one scope, as of ``version`` under ``epoch``."""

    vector_hash = "vectors"

    def __init__(self, name: str = "") -> None:
        super().__init__()
        self.name = name
        self.entries: dict[str, MemoryEntry] = {}
        self.texts: dict[str, str] = {}
        self.vectors: dict[str, StoredVector] = {}
        self.released = 0  # vectors held only by a graph-backed VectorIndex (see release())
        # The kit's vector index of each (model, dim) searched so far: the vectors that model
        # made from each entry's current text, kept up to date by every change (built on first use).
        self.vector_indexes: dict[tuple[str, int], VectorIndex] = {}
        # The approximate graph of each (model, dim) whose vectors reached the threshold (.ann),
        # kept up to date by every change like the exact vectors.
        self.anns: dict[tuple[str, int], AnnIndex] = {}
        self.building: dict[tuple[str, int], threading.Thread] = {}  # background builds (.ann_build)
        self.indexes: dict[str, Bm25Index] = {}
        self.filters = FilterIndex()
        self.validity = ValidityIndex()
        self.threads = ConversationThreads()
        self.derived: dict[object, object] = {}  # e.g. vector matrices; cleared on every change
        self.warned: set[str] = set()
        self.warm = False  # the last refresh completed: the cache is the scope as of ``version``
        # Cold start (see .cold): a snapshot-restored index answering plain BM25 searches until the
        # cache is built; guarded by ``cold_lock`` so that those searches never wait for ``lock``.
        self.cold_lock = threading.Lock()
        self.cold: Snapshot | None = None
        self._changed: list[str] = []
        self._bm25: tuple[tuple[object, ...], int] | None = None  # (as of, BM25 bytes)
        # A snapshot's structures being serialised outside the lock (freeze/thaw); saves go on.
        self.export: Export | None = None
        # Ids whose vectors changed since the graphs last took them: a graph insert costs ~1 ms at
        # 100,000 vectors, so the save that refreshes the cache leaves it to the next search
        # (which takes them in one batch, see sync_graphs()); the cache's vectors are current.
        self.graph_pending: set[str] = set()

    # -- freshness ---------------------------------------------------------------------------
    def refresh(self, engine: Engine, keys: SetKeys, seen: Seen | None = None) -> None:
        """Bring the cache up to the engine's current version (caller holds :attr:`lock`;
        ``seen`` as :meth:`Mirror.refresh`).

        Raises:
            EngineError: the engine failed; the cache then rebuilds on the next call.
        """
        try:
            super().refresh(engine, keys, seen)
        except BaseException:
            self.warm = False
            raise
        if not self.warm:
            with self.cold_lock:
                self.warm, self.cold = True, None

    def reset(self) -> None:
        self.entries, self.texts, self.vectors = {}, {}, {}
        self.released = 0
        self.vector_indexes = {}
        self.anns = {}
        self.graph_pending = set()
        self.indexes = {}
        self.filters = FilterIndex()
        self.validity = ValidityIndex()
        self.threads = ConversationThreads()
        self.derived = {}

    def rebuilt(self, engine: Engine, keys: SetKeys) -> None:
        if self.cold is not None:
            adopt(engine, keys, self)

    def approx_bytes(self) -> int:
        """The mirror's estimate (entries, vectors) plus the BM25 indexes' real bytes, recounted after
        a change (a count reads a few sizes), never while a snapshot holds an index (its lock is busy
        then, and the registry asks at every save)."""
        indexes = list(self.indexes.values())
        cold = self.cold
        if cold is not None:
            indexes.append(cold.index)
        key, counted = (self.epoch, self.version, len(indexes)), self._bm25
        if counted is None or (self.export is None and counted[0] != key):
            # A snapshot may have taken an index since export was read: its count waits for the
            # next call rather than the caller (the registry, under its lock) for the snapshot.
            sizes = [index.nbytes_if_free() for index in indexes]
            if counted is None or None not in sizes:
                total = sum(
                    index.nbytes() if n is None else n for index, n in zip(indexes, sizes, strict=True)
                )
                counted = self._bm25 = key, total
        return super().approx_bytes() + counted[1]

    def load(self, engine: Engine, keys: SetKeys, ids: Sequence[str]) -> None:
        if not ids:
            return
        self.derived = {}
        self._changed = []
        super().load(engine, keys, ids)
        if self._changed:
            self.threads.apply(self._changed, self.entries)
        self._changed = []
        self.size = len(self.entries)

    def take(self, rows: Sequence[Row]) -> None:
        changed = self._changed
        frozen = self.export
        index_held = None if frozen is None else frozen.index
        pending = self.graph_pending
        for entry_id, raw, raw_vector in rows:
            old_text = self.texts.get(entry_id)
            entry = decoded(from_json, raw, f"memory {entry_id!r}")
            if entry != self.entries.get(entry_id):
                changed.append(entry_id)
                if entry is None:
                    self.filters.remove(entry_id)
                    self.validity.remove(entry_id)
                else:
                    self.filters.add(entry)
                    self.validity.add(entry)
            if frozen is not None:  # a snapshot serialises those: applied when it is done (thaw)
                frozen.deferred.add(entry_id)
            if entry is None:
                self._drop(entry_id, index_held)
                continue
            text = document_text(entry)
            self.entries[entry_id], self.texts[entry_id] = entry, text
            vector = decode_vector(raw_vector) if raw_vector is not None else None
            self._put_vector(entry_id, vector)
            for (model, dim), vectors in self.vector_indexes.items():
                held = (model, dim) in self.anns
                if vector is not None and _valid(vector, model, dim, text):
                    if vectors.add(entry_id, vector.vector) and held:
                        pending.add(entry_id)
                else:
                    vectors.remove(entry_id)
                    if held:
                        pending.add(entry_id)
            if text != old_text:
                for index in self.indexes.values():
                    if index is not index_held:
                        index.remove(entry_id)
                        index.add(entry_id, text)

    def _drop(self, entry_id: str, index_held: Bm25Index | None) -> None:
        """Forget a gone entry (``index_held``: a snapshot's, left alone until thaw)."""
        self.entries.pop(entry_id, None)
        self.texts.pop(entry_id, None)
        self._put_vector(entry_id, None)
        for index in self.indexes.values():
            if index is not index_held:
                index.remove(entry_id)
        for vectors in self.vector_indexes.values():
            vectors.remove(entry_id)
        if self.anns:
            self.graph_pending.add(entry_id)

    def _put_vector(self, entry_id: str, vector: StoredVector | None) -> None:
        old = self.vectors.pop(entry_id, None) if vector is None else self.vectors.get(entry_id)
        self.released -= old is not None and not len(old.rows)
        if vector is not None:
            self.vectors[entry_id] = vector
            self.released += not len(vector.rows)

    def release(self, model: str, dim: int) -> None:
        """Drop the decoded float copy of each vector the (model, dim) index holds, once that index
        backs a graph (caller holds :attr:`lock`), and quantise the index to 4 bits (196 bytes an
        entry at 384 dimensions; the hits are then scored from the engine's floats, .ann_exact), or
        8 in a scope of conversation turns (its context profiles scan every vector; .turn_bits)."""
        found = self.vector_indexes.get((model, dim))
        if found is None:
            return
        found.quantise(8 if len(self.threads) else 4)
        for entry_id in found.ids():
            stored = self.vectors.get(entry_id)
            if stored is not None and len(stored.rows):
                self._put_vector(entry_id, _without_rows(stored))

    def vector_row(self, entry_id: str) -> npt.NDArray[np.float32]:
        """The stored vector of ``entry_id`` (held, or the index's, in 4 or 8 bits once released)."""
        stored = self.vectors[entry_id]
        if len(stored.rows):
            return stored.vector
        found = self.vector_indexes[(stored.model, stored.dim)]
        return found.gather([entry_id])[:, 0]

    # -- snapshots built aside (.export) ----------------------------------------------------
    def freeze(self, profile: str) -> Export:
        """Hand the BM25 index of ``profile`` and the graphs to a snapshot serialising them without
        :attr:`lock` (caller holds it, the cache fresh); refreshes defer their changes until :meth:`thaw`."""
        self.thawed()
        frozen = self.export = Export(profile, self.index(profile))
        return frozen

    def thaw(self, frozen: Export) -> None:
        """Apply what changed while ``frozen`` was serialised (caller holds :attr:`lock`, ``done`` set)."""
        if self.export is frozen:
            self.export = None
            catch_up(frozen, self.texts, self.indexes)

    def settle(self) -> None:
        """Wait, without :attr:`lock`, for a snapshot serialising this cache's structures (searches
        call it first, so they never wait for one while holding the lock saves need)."""
        frozen = self.export
        if frozen is not None:
            frozen.done.wait()

    def thawed(self) -> None:
        """Make the structures a snapshot holds and the graphs current again (caller holds
        :attr:`lock`; searches call it after their refresh)."""
        frozen = self.export
        if frozen is not None:
            frozen.done.wait()
            self.thaw(frozen)
        self.sync_graphs()

    def sync_graphs(self) -> None:
        """Give the graphs the vectors changed since they last took them (caller holds :attr:`lock`,
        no snapshot serialising them: :meth:`thawed` is the way in)."""
        pending, self.graph_pending = self.graph_pending, set()
        for key, held in self.anns.items() if pending else ():
            vectors = self.vector_indexes.get(key)
            if vectors is None:
                continue
            for entry_id in pending:
                held.remove(entry_id)
            added = [i for i in pending if i in vectors]
            if added:
                # The decoded floats while held (the index itself may hold them in 4 or 8 bits).
                held.extend(added, np.stack([self.vector_row(entry_id) for entry_id in added]))
                for entry_id in added:
                    stored = self.vectors.get(entry_id)
                    if stored is not None and len(stored.rows):
                        self._put_vector(entry_id, _without_rows(stored))

    # -- derived structures ------------------------------------------------------------------
    def shown(
        self, allowed: set[str] | None, view: View, now: float, key: object
    ) -> tuple[set[str] | None, object]:
        """``allowed`` (None: every entry) without what ``view`` hides at ``now``, and the key that
        names the result (``key`` names ``allowed``): kept in :attr:`derived` until the next change."""
        if not len(self.validity) and view.as_of is None:
            return allowed, key  # nothing superseded or expiring: nothing to hide
        hidden = self.validity.hidden(view, now, self.filters.created_after)
        if not hidden:
            return allowed, key
        name = ("shown", key, frozenset(hidden))
        found = self.derived.get(name)
        if found is None:
            pool = self.entries.keys() if allowed is None else allowed
            found = self.derived[name] = {i for i in pool if i not in hidden}
        return cast(set[str], found), name

    def index(self, profile: str) -> Bm25Index:
        """The BM25 index of ``profile`` over the cached entries (built on first use)."""
        self.thawed()
        index = self.indexes.get(profile)
        if index is None:
            index = Bm25Index(profile=profile)
            for entry_id, text in self.texts.items():
                index.add(entry_id, text)
            index.pack()  # built in one go: no room to grow kept (about 40 bytes an entry)
            self.indexes[profile] = index
        return index

    def vector_index(self, model: str, dim: int) -> VectorIndex:
        """The vectors ``model`` (of ``dim``) made from each entry's current text (built on first use)."""
        found = self.vector_indexes.get((model, dim))
        if found is None:
            found = self.vector_indexes[(model, dim)] = VectorIndex(dim)
            ids = sorted(i for i, v in self.vectors.items() if _valid(v, model, dim, self.texts[i]))
            if ids:  # none released: only this (model, dim)'s index releases its vectors
                found.extend(ids, np.vstack([self.vectors[i].vector for i in ids]))
        return found

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

    def vector_bytes(self) -> int:
        first = next(iter(self.vectors.values()), None)
        decoded = 0 if first is None else (len(self.vectors) - self.released) * first.dim * 4
        graphs = sum(a.nbytes for a in self.anns.values())
        return decoded + graphs + sum(v.nbytes for v in self.vector_indexes.values())


def adopt(engine: Engine, keys: SetKeys, cache: ScopeCache) -> None:
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
    _, changed = changes_since(engine, keys, snap.version)
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
    index.share_ids(texts)
    cache.indexes[SNAPSHOT_PROFILE] = index


def _without_rows(stored: StoredVector) -> StoredVector:
    return replace(stored, rows=_no_rows(stored.dim))


@functools.cache
def _no_rows(dim: int) -> npt.NDArray[np.float32]:
    """One read-only empty matrix per dimension, shared by every released vector (an array of its
    own costs 137 bytes: 137 MB at a million entries)."""
    empty = np.zeros((0, dim), dtype=np.float32)
    empty.flags.writeable = False
    return empty


def _valid(stored: StoredVector, model: str, dim: int, text: str) -> bool:
    """A stored vector is used only when ``model`` (of ``dim``) made it from the entry's current text."""
    return stored.model == model and stored.dim == dim and stored.text_hash == text_hash(text)


def scope_cache(engine: Engine, scope: str) -> ScopeCache:
    """The process-wide cache of ``scope`` on ``engine`` (shared by every instance on it)."""
    return registry.mirror(
        ("longterm", engine.identity, scope), lambda: ScopeCache(f"scope {scope!r}"), ScopeCache
    )


def scope_caches() -> list[ScopeCache]:
    """Every scope cache this process holds."""
    return [m for m in registry.mirrors("longterm") if isinstance(m, ScopeCache)]


def clear_caches() -> None:
    """Forget every scope's cache (tests simulate a new process with it)."""
    registry.clear("longterm")
