"""Vector candidates from a scope's approximate nearest-neighbour graph (:mod:`memstack.index.ann`).

A scope holding :data:`~memstack.index.ann.ANN_FROM` valid vectors or more of the embedder's model
gets a graph, kept entry by entry by its :class:`~.index_cache.ScopeCache` like the exact vectors. A
search asks the graph for its :func:`candidates` nearest (``depth``, twice that from a graph of
bits, more past 100,000 vectors; a filtered one for ``over x candidates x n / allowed``), keeps
those the filters, the tenant's scope and the validity window allow (``allowed``), re-scores each
from the scope's 4-bit vectors (a scale per vector:
:meth:`~memstack.index.vectors.VectorIndex.quantise`) and keeps the best ``depth``, each scored
again from the float vector the engine stores for it (:mod:`.ann_exact`). When
the filters leave fewer entries than the over-fetch could reach (``allowed`` smaller than ``n /
over``), or the graph's candidates leave fewer than ``depth`` allowed, the allowed vectors are
scored exactly instead: a filtered search never loses hits to the approximation, it only gets
cheaper when few entries are allowed. The fused ranking's background (the mean and spread of the
query's cosines over the scope) comes from the vectors' running moments
(:meth:`~memstack.index.vectors.VectorIndex.moments`): the scan's figure without the scan. The
conversation-context vector field (a score that reads every neighbour's cosine) keeps the exact
scan.

The graph is persisted beside the BM25 snapshot (:func:`encoder`, written by the snapshotter) and a
new process loads it (:func:`prepare`), replaying the changes logged since, instead of building it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from ...engines import Engine
from ...foundation.errors import InvalidValue
from ...index import ann as graph
from ...index.changelog import changes_since
from ...index.vectors import VectorIndex
from ...search.evidence import Background
from ...search.feedback import rocchio
from ...search.retrieval import SearchProfile
from . import ann_build
from .ann_exact import Reader
from .index_cache import ScopeCache
from .layout import ScopeKeys
from .vectors import Matrix

__all__ = ["OVER", "Draft", "draft", "encoder", "prepare", "uses_graph"]

log = logging.getLogger("memstack.tiers.longterm")

OVER: Final = 4
"""Candidates asked of the graph per hit kept (bench/scale.py prints the overlap it gives)."""

EXACT: Final = 1_000
"""Hits a search re-scores at most from the engine's float vectors (:mod:`.ann_exact`): every one
of the usual 100 (fusion reads each hit's cosine: re-scoring only the best 60 of them moved 4 % of
the fused top 10 on clustered vectors, the best 20 7 %); a deeper search keeps the quantised
cosines beyond it."""
GROWN_FROM: Final = 100_000
"""Vectors up to which a search asks the graph for ``depth`` candidates; beyond, for more
(:func:`candidates`)."""

Hits = list[tuple[str, float]]
Cosines = npt.NDArray[np.float32]


def candidates(depth: int, n: int, bits: bool = False) -> int:
    """How many candidates an unfiltered search asks of a graph of ``n`` vectors: ``depth`` up to
    :data:`GROWN_FROM`, then ``depth x sqrt(n / GROWN_FROM)``; twice that from a graph of bits
    (``bits``). A graph searched to a fixed depth finds a smaller share of the true neighbours as it
    grows (clustered 384-dimensional vectors, 8-bit graph, 100 candidates: 0.97 of the exact top 10
    at 100,000, 0.87 at 300,000), and asking for more candidates widens the search itself (usearch
    explores ``max(expansion, k)`` nodes). A bit graph's Hamming distance ranks its candidates
    coarsely; re-scoring twice as many costs little (a gather of a few hundred quantised rows) and
    kept the fused top 10 at 0.95 or more where the plain count gave 0.94 (hashed 384-dimensional
    vectors, tests/tiers/longterm/test_ann.py)."""
    count = depth if n <= GROWN_FROM else math.ceil(depth * (n / GROWN_FROM) ** 0.5)
    return 2 * count if bits else count


def uses_graph(cache: ScopeCache, profile: SearchProfile) -> bool:
    """The graph can stand in for the scan: the conversation-context vector field is not in play."""
    return not (profile.uses_context and profile.context_vector_weight > 0 and len(cache.threads))


def prepare(
    engine: Engine, keys: ScopeKeys, cache: ScopeCache, model: str, dim: int
) -> graph.AnnIndex | None:
    """The scope's graph for ``model``/``dim`` (caller holds ``cache.lock``), loaded from its snapshot
    or built; None below the threshold, without the library, or while a big scope's graph is built
    in the background (:mod:`.ann_build`).

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
    if found is None and len(vectors) >= ann_build.BACKGROUND_FROM:
        ann_build.build_later(cache, model, dim, vectors)
        return None  # exact until the thread installs the graph
    if found is None:
        found = graph.AnnIndex(dim)
        found.extend(vectors.ids(), vectors.columns().T)
        graph.stats.builds += 1
    cache.anns[(model, dim)] = found
    cache.release(model, dim)
    return found


def _load(
    engine: Engine, keys: ScopeKeys, cache: ScopeCache, model: str, dim: int, vectors: VectorIndex
) -> graph.AnnIndex | None:
    """The persisted graph made to hold exactly ``vectors``' ids, or None (none, an older format,
    another epoch or model, older than the change log, or damaged: logged)."""
    raw = engine.get(keys.ann)
    if raw is None:
        return None
    try:
        data = raw.encode("latin-1")
        if not graph.current(data):
            return None  # an older format: built again (and stored by the next snapshot)
        found, meta = graph.AnnIndex.from_bytes(data)
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
    found.share_ids(vectors.ids())  # the cache's id strings, not the snapshot's copies
    missing = [i for i in vectors.ids() if i not in found]
    if missing:
        found.extend(missing, vectors.columns()[:, vectors.rows_of(missing)].T)
    graph.stats.loads += 1
    return found


def encoder(cache: ScopeCache, epoch: str, *, frozen: bool = False) -> Callable[[], str | None]:
    """What the scope's snapshot stores of its graph, taken under ``cache.lock`` (the caller holds
    it) and encoded by the returned call without it: a search never waits for a serialisation (tens
    of MB at 100,000 entries) or a build (seconds). The graph the cache holds is copied; without one,
    from :data:`~memstack.index.ann.ANN_FROM` vectors of one model the vectors are copied and the
    graph is built from them (once, by the writer, so that no reader has to). The call returns None
    when there is nothing to store. ``frozen``: the caller holds a freeze (``cache.freeze``), which
    nothing changes the graphs during, so they are encoded as they are, without a copy."""
    meta: dict[str, object] = {"epoch": epoch, "version": cache.version}
    if cache.anns:
        (model, _), held = max(cache.anns.items(), key=lambda item: len(item[1]))
        found = held if frozen else held.copy()
        return lambda: _text(found, {**meta, "model": model})
    first = next(iter(cache.vectors.values()), None)
    if first is None or len(cache.vectors) < graph.ANN_FROM or not graph.available():
        return lambda: None
    vectors = cache.vector_index(first.model, first.dim)
    ids, columns = vectors.ids(), vectors.columns().copy()

    def build() -> str | None:
        if len(ids) < graph.ANN_FROM:
            return None
        built = graph.AnnIndex(first.dim)
        built.extend(ids, columns.T)
        graph.stats.builds += 1
        return _text(built, {**meta, "model": first.model})

    return build


def _text(found: graph.AnnIndex, meta: dict[str, object]) -> str:
    return found.to_bytes(meta).decode("latin-1")  # engines store text: bytes as code points 0-255


@dataclass(frozen=True)
class Draft:
    """A graph-backed search's ``depth`` best vector hits by their quantised cosines (best first,
    ties in the order found), before the exact pass: the query ``unit`` they were scored against and
    the background of its cosines. Taken under ``cache.lock``; :meth:`rescored` then needs neither
    the lock nor the cache, so the engine read between them (:mod:`.ann_exact`) is made without it."""

    ids: npt.NDArray[np.object_]
    cosines: Cosines
    unit: Matrix
    background: Background | None

    @property
    def head(self) -> list[str]:
        """The ids re-scored from their float vectors: the first :data:`EXACT`."""
        head: list[str] = self.ids[:EXACT].tolist()
        return head

    def rescored(self, rows: Matrix, ok: npt.NDArray[np.bool_]) -> Hits:
        """The hits, the :attr:`head` scored again from ``rows`` (unit float vectors) where ``ok``
        says they were read (the others keep their quantised cosine), best first."""
        ids, cosines = self.ids, self.cosines.copy()
        if len(rows):
            cosines[: len(rows)][ok] = np.clip(rows[ok] @ self.unit, -1.0, 1.0)
            order = np.argsort(-cosines, kind="stable")
            ids, cosines = ids[order], cosines[order]
        return list(zip(ids.tolist(), cosines.tolist(), strict=True))

    def hits(self, read: Reader | None) -> Hits:
        """The hits, the :attr:`head` re-scored from what ``read`` gives (None: as drafted)."""
        if read is None or not len(self.ids):
            return self.rescored(np.zeros((0, len(self.unit)), dtype=np.float32), np.zeros(0, dtype=bool))
        return self.rescored(*read(self.head))


Best = tuple[npt.NDArray[np.object_], Cosines]
"""Ids and their quantised cosines, best first."""


def _best(ids: npt.NDArray[np.object_], cosines: Cosines, depth: int) -> Best:
    """The ``depth`` best of ``ids`` by ``cosines``, best first (ties: the order given)."""
    order = np.argsort(-cosines, kind="stable")[:depth]
    return ids[order], np.array(cosines[order], dtype=np.float32)


def _exact(vectors: VectorIndex, unit: Matrix, allowed: set[str], depth: int) -> Best:
    ids = [i for i in allowed if i in vectors]
    if not ids:
        return np.array([], dtype=object), np.zeros(0, dtype=np.float32)
    scores = unit @ vectors.gather(ids)
    order = np.lexsort((np.arange(len(ids)), -scores))
    return _best(np.array(ids, dtype=object)[order], scores[order], depth)


def _candidates(
    found: graph.AnnIndex, vectors: VectorIndex, unit: Matrix, allowed: set[str] | None, depth: int
) -> Best:
    n = len(vectors)
    pool = n if allowed is None else len(allowed)
    if allowed is not None and pool * OVER * 2 < n:  # too selective for an over-fetch to reach
        return _exact(vectors, unit, allowed, depth)
    # Unfiltered: the graph's best ``candidates`` (``depth`` up to 100,000 vectors); filtered:
    # enough more that as many allowed ones are likely among them.
    wide = candidates(depth, n, graph.bits(found.dim))
    k = wide if allowed is None else min(n, OVER * wide * -(-n // max(pool, 1)))
    ids, cosines = found.nearest(unit, k)
    if allowed is not None:
        keep = np.fromiter((i in allowed for i in ids.tolist()), dtype=bool, count=len(ids))
        ids, cosines = ids[keep], cosines[keep]
        if len(ids) < min(depth, pool):
            return _exact(vectors, unit, allowed, depth)
    ids, cosines = ids[:wide], cosines[:wide]
    # Every candidate is re-scored from the index's own quantised vectors (a scale each): the graph's
    # order is coarse (Hamming distances, or usearch's 8 bits with one scale for every vector, off by
    # up to ~0.01: enough to move 4 % of the fused top 10 when only the best 32 were re-scored,
    # bench/scale.py --vectors clustered); the best ``depth`` are then re-scored exactly.
    if len(ids):
        cosines = unit @ vectors.gather(ids.tolist())
    return _best(ids, cosines, depth)


def _background(vectors: VectorIndex, unit: Matrix) -> Background | None:
    """Mean and spread of the query's cosines over every vector, from the index's running moments
    (``dim**2`` work, exact up to float rounding: what the scan computes, without the scan)."""
    total, outer, n = vectors.moments()
    if not n:
        return None
    query = unit.astype(np.float64)
    mean = float(query @ total) / n
    square = float(query @ outer @ query) / n
    return Background(mean, max(square - mean * mean, 0.0) ** 0.5)


def draft(
    found: graph.AnnIndex,
    vectors: VectorIndex,
    query_vector: Matrix,
    profile: SearchProfile,
    allowed: set[str] | None,
    depth: int,
    read: Reader | None = None,
) -> Draft | None:
    """The ``depth`` best among ``allowed`` (None: all) from the graph's candidates by their
    quantised cosines (None: a zero query or no vector), for :meth:`Draft.rescored` to finish.
    Rocchio feedback moves the query first, from the float vectors ``read`` gives of its first hits
    (the caller holds ``cache.lock`` across this read: a profile with Rocchio pays it there)."""
    norm = float(np.linalg.norm(query_vector))
    if norm == 0.0 or not len(vectors):
        return None
    unit: Matrix = (query_vector.astype(np.float32) / np.float32(norm)).reshape(-1)
    if profile.rocchio_docs > 0:
        ids, cosines = _candidates(found, vectors, unit, allowed, profile.rocchio_docs)
        first = [i for i, _ in Draft(ids, cosines, unit, None).hits(read)]
        if first:
            feedback = vectors.gather(first).T
            if read is not None:  # the float vectors where the engine has them
                rows, ok = read(first)
                feedback[ok] = rows[ok]
            unit = rocchio(unit, np.ascontiguousarray(feedback), profile.rocchio_weight)
    ids, cosines = _candidates(found, vectors, unit, allowed, depth)
    return Draft(ids, cosines, unit, _background(vectors, unit))
