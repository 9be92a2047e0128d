"""Vector candidates from a scope's approximate nearest-neighbour graph (:mod:`memstack.index.ann`).

A scope holding :data:`~memstack.index.ann.ANN_FROM` valid vectors or more of the embedder's model
gets a graph, kept entry by entry by its :class:`~.index_cache.ScopeCache` like the exact vectors.
A search asks the graph for ``over x depth`` candidates with their 8-bit cosines, keeps those the
filters, the tenant's scope and the validity window allow (``allowed``), and gives the best
:data:`RESCORED` their exact float cosine. When the filters leave fewer entries than
the over-fetch could reach (``allowed`` smaller than ``n / over``), or the graph's candidates leave
fewer than ``depth`` allowed, the allowed vectors are scored exactly instead: a filtered search never
loses hits to the approximation, it only gets cheaper when few entries are allowed. The fused
ranking's background (the mean and spread of the query's cosines over the scope) is measured on a
fixed stride of :data:`BACKGROUND_SAMPLE` vectors. The conversation-context vector field (a score
that reads every neighbour's cosine) keeps the exact scan.

The graph is persisted beside the BM25 snapshot (:func:`encoded`, written by the snapshotter) and a
new process loads it (:func:`prepare`), replaying the changes logged since, instead of building it.
"""

from __future__ import annotations

import logging
from typing import Final

import numpy as np

from ...engines import Engine
from ...foundation.errors import InvalidValue
from ...index import ann as graph
from ...index.changelog import changes_since
from ...index.vectors import VectorIndex
from ...search.evidence import Background
from ...search.feedback import rocchio
from ...search.retrieval import SearchProfile
from .index_cache import ScopeCache
from .layout import ScopeKeys
from .vectors import Matrix

__all__ = ["BACKGROUND_SAMPLE", "OVER", "RESCORED", "encoded", "prepare", "uses_graph", "vector_hits"]

log = logging.getLogger("memstack.tiers.longterm")

OVER: Final = 4
"""Candidates asked of the graph per hit kept (bench/scale.py prints the overlap it gives)."""
RESCORED: Final = 32
"""Candidates re-scored with their exact float cosine."""
BACKGROUND_SAMPLE: Final = 4096
"""Vectors whose cosines give the fused ranking's background in a graph-backed search."""

Hits = list[tuple[str, float]]


def uses_graph(cache: ScopeCache, profile: SearchProfile) -> bool:
    """The graph can stand in for the scan: the conversation-context vector field is not in play."""
    return not (profile.uses_context and profile.context_vector_weight > 0 and len(cache.threads))


def prepare(
    engine: Engine, keys: ScopeKeys, cache: ScopeCache, model: str, dim: int
) -> graph.AnnIndex | None:
    """The scope's graph for ``model``/``dim`` (caller holds ``cache.lock``), loaded from its snapshot
    or built; None below the threshold or without the library.

    Raises:
        EngineError: the engine failed.
    """
    found = cache.anns.get((model, dim))
    if found is not None:
        return found
    vectors = cache.vector_index(model, dim)
    if len(vectors) < graph.ANN_FROM or not graph.available():
        return None
    found = _load(engine, keys, cache, model, dim, vectors)
    if found is None:
        found = graph.AnnIndex(dim)
        found.extend(vectors.ids(), vectors.columns().T)
        graph.stats.builds += 1
    cache.anns[(model, dim)] = found
    return found


def _load(
    engine: Engine, keys: ScopeKeys, cache: ScopeCache, model: str, dim: int, vectors: VectorIndex
) -> graph.AnnIndex | None:
    """The persisted graph made to hold exactly ``vectors``' ids, or None (none, another epoch or
    model, older than the change log, or damaged: logged)."""
    raw = engine.get(keys.ann)
    if raw is None:
        return None
    try:
        found, meta = graph.AnnIndex.from_bytes(raw.encode("latin-1"))
    except (UnicodeEncodeError, InvalidValue) as exc:
        log.warning("%s: ignoring a damaged ANN snapshot (%s)", keys.ann, exc)
        return None
    version = meta.get("version")
    if meta.get("epoch") != cache.epoch or meta.get("model") != model or found.dim != dim:
        return None
    if not isinstance(version, int):
        return None
    _, changed = changes_since(engine, keys, version)
    if changed is None:
        return None
    for entry_id in changed:  # re-read: the cache already holds each one's current vector
        found.remove(entry_id)
    for entry_id in found.ids():
        if entry_id not in vectors:
            found.remove(entry_id)
    missing = [i for i in vectors.ids() if i not in found]
    if missing:
        found.extend(missing, vectors.columns()[:, vectors.rows_of(missing)].T)
    graph.stats.loads += 1
    return found


def encoded(cache: ScopeCache, epoch: str) -> str | None:
    """The cache's graph as the text an engine stores (caller holds ``cache.lock``), or None."""
    if not cache.anns:
        return None
    (model, _), found = max(cache.anns.items(), key=lambda item: len(item[1]))
    data = found.to_bytes({"epoch": epoch, "version": cache.version, "model": model})
    return data.decode("latin-1")  # engines store text: bytes as code points 0-255, as snapshots do


def _exact(vectors: VectorIndex, unit: Matrix, allowed: set[str], depth: int) -> Hits:
    ids = [i for i in allowed if i in vectors]
    if not ids:
        return []
    scores = unit @ vectors.columns()[:, vectors.rows_of(ids)]
    order = np.lexsort((np.arange(len(ids)), -scores))[:depth]
    return [(ids[n], float(scores[n])) for n in order.tolist()]


def _candidates(
    found: graph.AnnIndex, vectors: VectorIndex, unit: Matrix, allowed: set[str] | None, depth: int
) -> Hits:
    n = len(vectors)
    pool = n if allowed is None else len(allowed)
    if allowed is not None and pool * OVER * 2 < n:  # too selective for an over-fetch to reach
        return _exact(vectors, unit, allowed, depth)
    k = min(n, OVER * depth * max(1, -(-n // max(pool, 1))))
    hits = found.search(unit, k)
    if allowed is not None:
        hits = [h for h in hits if h[0] in allowed]
    if len(hits) < min(depth, pool) and allowed is not None:
        return _exact(vectors, unit, allowed, depth)
    hits = [h for h in hits if h[0] in vectors][:depth]
    # The best few get their exact cosine (a gather of columns costs ~6 us each); the rest keep
    # the 8-bit one, within about 0.01, which moves them little in fusion.
    head = [i for i, _ in hits[:RESCORED]]
    if head:
        exact = (unit @ vectors.columns()[:, vectors.rows_of(head)]).tolist()
        hits[: len(head)] = list(zip(head, exact, strict=True))
    hits.sort(key=lambda h: -h[1])
    return hits


def _background(vectors: VectorIndex, unit: Matrix) -> Background | None:
    """Mean and spread of the query's cosines over :data:`BACKGROUND_SAMPLE` vectors: a few runs of
    adjacent columns spread over the matrix (a strided sample cost ~14 ms at 10,000, a run ~0.3 ms)."""
    columns = vectors.columns()
    n = columns.shape[1]
    if not n:
        return None
    run = BACKGROUND_SAMPLE // 4
    starts = range(0, n, max(run, n // 4))
    sample = np.concatenate([unit @ columns[:, s : s + run] for s in starts][:4])
    return Background(float(sample.mean()), float(sample.std()))


def vector_hits(
    found: graph.AnnIndex,
    vectors: VectorIndex,
    query_vector: Matrix,
    profile: SearchProfile,
    allowed: set[str] | None,
    depth: int,
) -> tuple[Hits, Background | None]:
    """The ``depth`` best ``(id, exact cosine)`` among ``allowed`` (None: all) from the graph's
    candidates, and the background of the cosines (Rocchio feedback as the exact path does it)."""
    norm = float(np.linalg.norm(query_vector))
    if norm == 0.0 or not len(vectors):
        return [], None
    unit: Matrix = (query_vector.astype(np.float32) / np.float32(norm)).reshape(-1)
    if profile.rocchio_docs > 0:
        first = _candidates(found, vectors, unit, allowed, profile.rocchio_docs)
        if first:
            feedback = vectors.columns()[:, vectors.rows_of([i for i, _ in first])].T
            unit = rocchio(unit, np.ascontiguousarray(feedback), profile.rocchio_weight)
    return _candidates(found, vectors, unit, allowed, depth), _background(vectors, unit)
