"""The second ranking stage of a search over conversation turns, run on a scope's cache.

Builds the :class:`~memstack.search.turn_rerank.TurnHead` of the first fused turns (their words,
sessions, neighbours and cosines, from the scope's thread table and vector matrix) and re-orders
them by :func:`~memstack.search.turn_rerank.rescored`. Engine-agnostic: it reads the cache only.
:func:`watched` hands each head, before it is re-scored, to a caller's function: that is how
``bench/fit_turn_rerank.py`` fits the stage's table on the very features a search computes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import cast

import numpy as np
import numpy.typing as npt

from ...search.embedders import Embedder
from ...search.evidence import Background, Terms
from ...search.fusion import Row
from ...search.turn_rerank import DEPTH, MISSING_Z, TurnHead, rescored
from . import hybrid
from .index_cache import ScopeCache
from .vectors import Matrix

__all__ = ["DEPTH", "HeadWatcher", "reordered", "watched"]

HeadWatcher = Callable[[list[Row], TurnHead], None]
"""Called with the first fused rows of a search and the :class:`TurnHead` built of them."""

_WATCHER: ContextVar[HeadWatcher | None] = ContextVar("turn_head_watcher", default=None)


@contextmanager
def watched(watcher: HeadWatcher) -> Iterator[None]:
    """Within the block, every search of this thread (or task) that runs the second stage hands
    ``watcher`` its head before re-scoring it; the search itself is unchanged. The head does not
    depend on the stage's weights, so a table fitted on what ``watcher`` receives is fitted on
    exactly what the stage will re-score."""
    token = _WATCHER.set(watcher)
    try:
        yield
    finally:
        _WATCHER.reset(token)


def _z_scores(
    cache: ScopeCache, embedder: Embedder, query_vector: Matrix, background: Background, ids: list[str]
) -> npt.NDArray[np.float64]:
    """Each id's cosine with the query in standard deviations over the scope's cosines (0 without a
    vector: the background itself)."""
    row_of = hybrid.row_index(cache, embedder)
    _, matrix = hybrid.vector_matrix(cache, embedder)
    rows = np.fromiter((row_of.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))
    out: npt.NDArray[np.float64] = np.zeros(len(ids))
    norm = float(np.linalg.norm(query_vector))
    known = rows >= 0
    if norm == 0.0 or not known.any():
        return out
    unit = query_vector.astype(np.float32) / np.float32(norm)
    cosines = np.dot(unit, matrix[:, rows[known]]).astype(np.float64)
    spread = background.std if background.std > 0 else 1.0
    out[known] = (cosines - background.mean) / spread
    return out


def _shapes(cache: ScopeCache, ids: list[str]) -> list[tuple[int, bool]]:
    """Each turn's word count and whether it ends with a question mark, kept in ``cache.derived``
    until the scope changes (a search reads the same turns again and again)."""
    known = cast(dict[str, tuple[int, bool]], cache.derived.setdefault(("turn_shapes",), {}))
    out = []
    for entry_id in ids:
        shape = known.get(entry_id)
        if shape is None:
            text = cache.entries[entry_id].content
            shape = known[entry_id] = (len(text.split()), text.rstrip().endswith("?"))
        out.append(shape)
    return out


def _head(
    cache: ScopeCache,
    embedder: Embedder,
    query_vector: Matrix,
    background: Background,
    terms: Terms | None,
    rows: list[Row],
) -> TurnHead:
    table = cache.thread_table()
    ids = [row[0] for row in rows]
    slots = table.slots(ids)
    near = table.neighbours(slots, 1)
    session = np.append(table.session, -1)  # slot -1 reads -1
    own = session[slots]
    near = np.where((near >= 0) & (session[near] == own[:, None]) & (own[:, None] >= 0), near, -1)
    position = {slot: n for n, slot in enumerate(slots.tolist()) if slot >= 0}
    neighbours = np.array(
        [[position.get(s, -1) for s in line] for line in near.tolist()], dtype=np.int64
    ).reshape(len(ids), -1)
    near_ids = [table.ids[s] for s in near.ravel().tolist() if s >= 0]
    z = _z_scores(cache, embedder, query_vector, background, ids + near_ids)
    near_z = dict(zip(near_ids, z[len(ids) :].tolist(), strict=True))
    neighbour_z = np.array(
        [max((near_z[table.ids[s]] for s in line if s >= 0), default=MISSING_Z) for line in near.tolist()]
    )
    parts = [terms.parts(row[2], row[3]) if terms is not None else (0.0, 0.0) for row in rows]
    shapes = _shapes(cache, ids)
    return TurnHead(
        words=np.array([shape[0] for shape in shapes], dtype=np.int64),
        questions=np.array([shape[1] for shape in shapes], dtype=np.bool_),
        scores=np.array([row[1] for row in rows], dtype=np.float64),
        bm25_parts=np.array([p[0] for p in parts], dtype=np.float64),
        vector_parts=np.array([p[1] for p in parts], dtype=np.float64),
        sessions=own,
        neighbours=neighbours,
        z=z[: len(ids)],
        neighbour_z=neighbour_z,
    )


def reordered(
    cache: ScopeCache,
    embedder: Embedder,
    query_vector: Matrix,
    background: Background,
    terms: Terms | None,
    fused: list[Row],
) -> list[Row]:
    """The first :data:`DEPTH` rows of ``fused`` re-scored and re-ordered (ties keep the fused
    order), then the rest unchanged."""
    head, tail = fused[:DEPTH], fused[DEPTH:]
    if not head:
        return fused
    built = _head(cache, embedder, query_vector, background, terms, head)
    watcher = _WATCHER.get()
    if watcher is not None:
        watcher(head, built)
    scores = rescored(built)
    order = np.argsort(-scores, kind="stable").tolist()
    return [(head[n][0], float(scores[n]), *head[n][2:]) for n in order] + tail
