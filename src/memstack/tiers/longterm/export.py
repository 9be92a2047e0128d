"""A scope's structures handed to a snapshot that serialises them outside the cache lock.

A snapshot of a big scope serialises its BM25 index (0.2 s at 100,000 entries) and copies its
graph (0.15 s). Done under the cache lock, every save of the scope waited for it: a save's cost
grew with the scope. Instead the snapshot freezes them under the lock (the cache fresh, so they say
exactly what its version says), serialises them without it, and the refreshes made meanwhile leave
them alone and note the ids they changed; when the snapshot is done those ids are taken again from
the cache's current texts and vectors (:meth:`~.index_cache.ScopeCache.thaw`). Searches wait for
the snapshot before they take the lock (:meth:`~.index_cache.ScopeCache.settle`), so they never
see a frozen structure either.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...index.ann import AnnIndex
from ...index.vectors import VectorIndex
from ...search import Bm25Index

__all__ = ["Export", "catch_up"]


@dataclass(slots=True, eq=False)
class Export:
    """What a snapshot serialises: nothing changes them until ``done``; the ids changed meanwhile
    are kept in ``deferred``."""

    profile: str
    index: Bm25Index
    graphs: dict[tuple[str, int], AnnIndex]
    done: threading.Event = field(default_factory=threading.Event)
    deferred: set[str] = field(default_factory=set)


def catch_up(
    frozen: Export,
    texts: Mapping[str, str],
    indexes: Mapping[str, Bm25Index],
    vector_indexes: Mapping[tuple[str, int], VectorIndex],
    anns: Mapping[tuple[str, int], AnnIndex],
) -> list[str]:
    """Bring the frozen structures still in use up to the current ``texts`` and vectors; returns
    the ids a graph now holds (their float copies can be released)."""
    index = frozen.index
    if indexes.get(frozen.profile) is index:
        for entry_id in frozen.deferred:
            index.remove(entry_id)
            text = texts.get(entry_id)
            if text is not None:
                index.add(entry_id, text)
    held_ids: list[str] = []
    for key, held in frozen.graphs.items():
        vectors = vector_indexes.get(key)
        if anns.get(key) is not held or vectors is None:
            continue
        for entry_id in frozen.deferred:
            held.remove(entry_id)
            if entry_id in vectors:
                held.add(entry_id, vectors.columns()[:, vectors.rows_of([entry_id])[0]])
                held_ids.append(entry_id)
    return held_ids
