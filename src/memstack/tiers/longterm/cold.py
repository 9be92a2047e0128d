"""Cold start: plain BM25 searches answered from the scope's snapshot, the full cache on demand.

A process whose cache of a scope is not built (``ScopeCache.warm`` is False), asked a BM25 search
without filters, loads the scope's snapshot (:mod:`.snapshot`) once, replays the changes logged since
it was taken, ranks with it and reads only the hits' entries. Later such searches do the same with
the snapshot kept in memory (each replays what the log added since). The full cache is built only
when a search needs it: filters, vectors, a recency listing, RM3, the ``rockbot`` profile, or a scope
holding conversation turns searched with the context field or propagation (neither the field nor the
threads are in a snapshot); after that every search goes the usual way and the snapshot is dropped,
its BM25 index adopted by the cache (``index_cache.adopt``) instead of tokenising every entry again. A
background build was tried and dropped: its Python work held the GIL against the searches it was meant
to spare (0.4 s each at 200k entries instead of 1 ms).
``cold_start_s`` in bench/search_speed.py measures the first search of a new process.
"""

from __future__ import annotations

import logging

from ...engines import Engine
from ...index.changelog import changes_since
from ...index.mirror import decoded  # unlogged: the full cache warns when it meets one
from ...search.retrieval import SearchProfile
from .entry import MemoryEntry, from_json
from .index_cache import ScopeCache
from .layout import ScopeKeys
from .provenance import provenance
from .query import document_text
from .snapshot import SNAPSHOT_PROFILE, Snapshot, load

__all__ = ["search"]

log = logging.getLogger("memstack.tiers.longterm")


def search(
    engine: Engine, keys: ScopeKeys, cache: ScopeCache, query: str, profile: SearchProfile, k: int
) -> list[tuple[MemoryEntry, float]] | None:
    """The ``k`` best ``(entry, BM25 score)`` pairs from the snapshot, or None when the full cache
    must answer (it is built, there is no usable snapshot, or the profile needs more).

    Raises:
        EngineError: the engine failed.
    """
    if cache.warm or profile.bm25 != SNAPSHOT_PROFILE or profile.rm3_docs > 0:
        return None
    with cache.cold_lock:
        if cache.warm:
            return None
        snap = _current(engine, keys, cache)
        if snap is None:
            return None
        if snap.threads and (profile.uses_context or profile.propagates):
            return None
        ranked = snap.index.search(query, k)
    raws = engine.mget([keys.entry(entry_id) for entry_id, _ in ranked]) if ranked else []
    found = []
    for (entry_id, score), raw in zip(ranked, raws, strict=True):
        entry = decoded(from_json, raw)
        if entry is not None and entry.id == entry_id:  # gone since: left out, as a warm cache would
            found.append((entry, score))
    return found


def _current(engine: Engine, keys: ScopeKeys, cache: ScopeCache) -> Snapshot | None:
    """The snapshot brought up to the scope's version (caller holds ``cache.cold_lock``)."""
    raw_version, epoch = engine.mget([keys.version, keys.epoch])
    if epoch is None:
        return None
    snap = cache.cold if isinstance(cache.cold, Snapshot) and cache.cold.epoch == epoch else None
    if snap is None:
        snap = load(engine, keys, epoch)
        if snap is None:
            return None
    if int(raw_version or 0) != snap.version:
        version, changed = changes_since(engine, keys, snap.version)
        if changed is None:  # older than the log: the full cache is the only way
            cache.cold = None
            return None
        _replay(engine, keys, snap, sorted(changed))
        snap.version = version
    cache.cold = snap
    return snap


def _replay(engine: Engine, keys: ScopeKeys, snap: Snapshot, ids: list[str]) -> None:
    """Take the current state of ``ids`` into the snapshot's index (idempotent: a snapshot may
    already reflect a change logged after its version, and re-reading it changes nothing)."""
    if not ids:
        return
    for entry_id, raw in zip(ids, engine.mget([keys.entry(i) for i in ids]), strict=True):
        entry = decoded(from_json, raw)
        if entry is None:
            snap.index.remove(entry_id)
            continue
        if provenance(entry) is not None:
            snap.threads = True
        snap.index.add(entry_id, document_text(entry))
