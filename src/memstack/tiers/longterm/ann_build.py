"""Building a big scope's approximate graph on a background thread, the scope's searches meanwhile exact.

A graph of 100,000 vectors takes half a minute to build (``bench/ann_choice.py``). Built inside the
search that first needs it, it would hold the scope's cache lock all that time, and every search of
the scope would wait. From :data:`BACKGROUND_FROM` vectors the search that finds no graph (none held,
none stored) copies the vectors under the lock, starts a thread that builds the graph from the copy
without it, and answers with the exact scan, as do the searches after it until the graph is in
place. The thread then takes the lock and brings the graph up to the cache's current vectors (ids
removed meanwhile dropped, ids added or re-embedded meanwhile added from the current columns) before
handing it over: a change made during the build is never lost.
"""

from __future__ import annotations

import logging
import threading
from typing import Final

import numpy as np

from ...index import ann as graph
from ...index.vectors import VectorIndex
from .index_cache import ScopeCache
from .vectors import Matrix

__all__ = ["BACKGROUND_FROM", "build_later", "reconcile"]

log = logging.getLogger("memstack.tiers.longterm")

BACKGROUND_FROM: int = 50_000
"""Vectors from which a missing graph is built on a background thread (below it, in the search that
needs it: 20,000 vectors took about 4 s in ``bench/ann_choice.py``). Tests lower it."""
_NAME: Final = "memstack-ann-build"


def build_later(cache: ScopeCache, model: str, dim: int, vectors: VectorIndex) -> None:
    """Start building the graph of ``vectors`` on a thread, unless one is under way (caller holds
    ``cache.lock``); the thread installs it in ``cache.anns`` when done."""
    key = (model, dim)
    running = cache.building.get(key)
    if running is not None and running.is_alive():
        return
    ids, columns, epoch = vectors.ids(), vectors.columns().copy(), cache.epoch

    def run() -> None:
        try:
            built = graph.AnnIndex(dim)
            built.extend(ids, columns.T)
            graph.stats.builds += 1
            with cache.lock:
                if cache.epoch != epoch or key in cache.anns or key not in cache.vector_indexes:
                    return  # wiped, reset or given a graph meanwhile: this one is stale
                reconcile(built, ids, columns, cache.vector_index(model, dim))
                cache.anns[key] = built
                cache.release(model, dim)
        except Exception:  # the scope stays on the exact scan; the next search tries again
            log.warning("%s: building the ANN graph failed", cache.name, exc_info=True)

    thread = cache.building[key] = threading.Thread(target=run, name=_NAME, daemon=True)
    thread.start()


def reconcile(built: graph.AnnIndex, ids: list[str], columns: Matrix, current: VectorIndex) -> None:
    """Make ``built`` (made from ``ids`` and their ``columns``) hold exactly ``current``'s vectors."""
    position = {entry_id: n for n, entry_id in enumerate(ids)}
    now = current.ids()
    for entry_id in set(position).difference(now):
        built.remove(entry_id)
    kept = [i for i in now if i in position]
    if kept:
        before = columns[:, [position[i] for i in kept]]
        after = current.columns()[:, current.rows_of(kept)]
        changed = np.flatnonzero(np.any(before != after, axis=0)).tolist()
    else:
        changed = []
    redo = [kept[n] for n in changed] + [i for i in now if i not in position]
    if redo:
        built.extend(redo, current.columns()[:, current.rows_of(redo)].T)
