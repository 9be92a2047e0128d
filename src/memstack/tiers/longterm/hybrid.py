"""Hybrid search over one scope's cache: valid vectors, the vector matrix, cosine hits.

A stored vector is used only when it was computed by the current embedder (same model id and
dimension) from the entry's current text; vectors of another model are counted as stale and
reported once per scope and model.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import cast

import numpy as np
import numpy.typing as npt

from ...search.embedders import Embedder, embed_queries
from .index_cache import ScopeCache
from .vectors import MAX_INPUT_CHARS, Matrix, text_hash

__all__ = [
    "allowed_rows",
    "cosines",
    "count_stale",
    "embed_query",
    "neighbour_rows",
    "row_index",
    "top_hits",
    "valid_vector_ids",
    "vector_hits",
    "vector_matrix",
    "with_neighbours",
]

Scores = npt.NDArray[np.float32]
Rows = npt.NDArray[np.int64]

log = logging.getLogger("memstack.tiers.longterm")


def valid_vector_ids(cache: ScopeCache, embedder: Embedder) -> list[str]:
    """Ids whose stored vector is the embedder's (model, dim) for the entry's current text."""
    model, dim = embedder.model_id, embedder.dim
    return sorted(
        entry_id
        for entry_id, stored in cache.vectors.items()
        if stored.model == model
        and stored.dim == dim
        and entry_id in cache.texts
        and stored.text_hash == text_hash(cache.texts[entry_id])
    )


def count_stale(cache: ScopeCache, embedder: Embedder) -> int:
    """Stored vectors computed by another model (id or dimension) than ``embedder``."""
    return sum(1 for v in cache.vectors.values() if v.model != embedder.model_id or v.dim != embedder.dim)


def vector_matrix(cache: ScopeCache, embedder: Embedder) -> tuple[list[str], Matrix]:
    """The valid vectors as one ``(dim, n)`` matrix, one *column* per id (ids in order): the live
    columns of the scope's :class:`~memstack.index.vectors.VectorIndex`, kept up to date entry by
    entry (no matrix is rebuilt after a change); the pair is cached until the scope changes."""
    key = ("matrix", embedder.model_id, embedder.dim)
    found = cache.derived.get(key)
    if found is None:
        index = cache.vector_index(embedder.model_id, embedder.dim)
        found = cache.derived[key] = (index.ids(), index.columns())
    return cast(tuple[list[str], Matrix], found)  # derived holds what this function stored


def embed_query(embedder: Embedder | None, query: str | None) -> Matrix | None:
    """The query's vector, or None (no embedder, blank query, or a failure: then BM25 alone)."""
    if embedder is None or query is None or not query.strip():
        return None
    try:
        vector: Matrix = embed_queries(embedder, [query[:MAX_INPUT_CHARS]])[0]
    except Exception:  # any embedder failure degrades to BM25, as the seed does
        log.warning("embedding the query failed; searching with BM25 only", exc_info=True)
        return None
    return vector


def _warn_stale(cache: ScopeCache, embedder: Embedder) -> None:
    if embedder.model_id in cache.warned:
        return
    key = ("stale", embedder.model_id, embedder.dim)
    stale = cache.derived.get(key)
    if stale is None:  # counted once per change of the scope, not per search
        stale = cache.derived[key] = count_stale(cache, embedder)
    if stale:
        cache.warned.add(embedder.model_id)
        log.warning(
            "%d memory vector(s) in %s were computed by another model than %r (dim %d) and are not "
            "used; call reembed() to recompute them",
            stale, cache.name, embedder.model_id, embedder.dim,
        )  # fmt: skip


def cosines(cache: ScopeCache, embedder: Embedder, query_vector: Matrix) -> tuple[list[str], Scores]:
    """Every valid vector's cosine with the query (ids in matrix order); warns once about stale vectors."""
    _warn_stale(cache, embedder)
    ids, matrix = vector_matrix(cache, embedder)
    norm = float(np.linalg.norm(query_vector))
    if not ids or norm == 0.0:
        return [], np.zeros(0, dtype=np.float32)
    unit: Scores = query_vector.astype(np.float32) / np.float32(norm)
    scores: Scores = np.dot(unit, matrix)
    return ids, scores


def neighbour_rows(cache: ScopeCache, embedder: Embedder, window: int) -> npt.NDArray[np.int64]:
    """For each matrix row, the rows of its ``window`` conversation neighbours each side (-1: none)."""
    key = ("neighbours", embedder.model_id, embedder.dim, window)
    found = cache.derived.get(key)
    if found is None:
        # From the scope's thread table, in numpy: a loop over every id's neighbours cost ~0.5 s at
        # 100,000 rows after each change of the scope.
        ids, _ = vector_matrix(cache, embedder)
        threads = cache.thread_table()
        slots = threads.slots(ids)
        row_of_slot = np.full(len(threads.ids) + 1, -1, dtype=np.int64)  # slot -1 reads the last
        row_of_slot[slots[slots >= 0]] = np.flatnonzero(slots >= 0)
        rows = row_of_slot[threads.neighbours(slots, window)]
        # rows that have neighbours first, in turn order: stable on "is missing"
        order = np.argsort(rows < 0, axis=1, kind="stable")
        found = cache.derived[key] = np.take_along_axis(rows, order, axis=1)
    return cast(npt.NDArray[np.int64], found)  # derived holds what this function stored


def with_neighbours(scores: Scores, neighbours: npt.NDArray[np.int64], weight: float) -> Scores:
    """``score + weight · max(0, best neighbour score)`` per row (the vector side of the context field).

    One gather per neighbour column: ``padded[neighbours].max(axis=1)`` reduces along the short axis
    and cost ~5 ms at 100,000 rows against ~0.7 ms this way (``bench/search_speed.py --conversations``).
    Scoring only the best rows and their neighbours under a bound measured no cheaper there: the bound
    rarely held for 4 x depth rows, and gathering a few thousand rows' neighbours costs about what
    this pass does."""
    if neighbours.shape[1] == 0 or not len(scores):
        return scores
    padded = np.append(scores, np.float32(0.0))  # row -1 reads this 0
    best = padded[neighbours[:, 0]]
    for column in range(1, neighbours.shape[1]):
        np.maximum(best, padded[neighbours[:, column]], out=best)
    np.maximum(best, np.float32(0.0), out=best)
    out: Scores = (scores + np.float32(weight) * best).astype(np.float32)
    return out


def row_index(cache: ScopeCache, embedder: Embedder) -> dict[str, int]:
    """Id -> its row in :func:`vector_matrix`, cached until the scope changes."""
    key = ("row_index", embedder.model_id, embedder.dim)
    found = cache.derived.get(key)
    if found is None:
        ids, _ = vector_matrix(cache, embedder)
        found = cache.derived[key] = {entry_id: n for n, entry_id in enumerate(ids)}
    return cast(dict[str, int], found)  # derived holds what this function stored


def allowed_rows(ids: list[str], allowed: set[str], row_of: Mapping[str, int] | None = None) -> Rows:
    """The rows of ``ids`` that are ``allowed``, ascending. With ``row_of`` (id -> row, as
    :func:`row_index`) a small filter costs its own size, not a pass over every id (~16 ms at
    100,000 rows)."""
    if row_of is not None and len(allowed) < len(ids):
        rows = np.fromiter((r for i in allowed if (r := row_of.get(i)) is not None), dtype=np.int64)
        rows.sort()
        return rows
    return np.fromiter((n for n, i in enumerate(ids) if i in allowed), dtype=np.int64)


def top_hits(
    ids: list[str],
    scores: Scores,
    allowed: set[str] | None,
    depth: int,
    row_of: Mapping[str, int] | None = None,
) -> list[tuple[str, float]]:
    """The ``depth`` best ``(id, score)`` among ``allowed`` (None: all), best first, ties by row;
    ``row_of`` as :func:`allowed_rows`."""
    if allowed is None:
        pool = scores
        rows = None
    else:
        rows = allowed_rows(ids, allowed, row_of)
        pool = scores[rows]
    if len(pool) > depth > 0:
        cut = np.partition(pool, len(pool) - depth)[len(pool) - depth]
        best = np.flatnonzero(pool >= cut)  # every tie at the cut survives; the sort below picks among them
    else:
        best = np.arange(len(pool) if depth > 0 else 0)
    chosen = best if rows is None else rows[best]
    chosen = chosen[np.lexsort((chosen, -scores[chosen]))][:depth]
    return [(ids[n], score) for n, score in zip(chosen.tolist(), scores[chosen].tolist(), strict=True)]


def vector_hits(
    cache: ScopeCache, embedder: Embedder, query_vector: Matrix, allowed: set[str] | None, depth: int
) -> list[tuple[str, float]]:
    """The ``depth`` best ``(id, cosine)`` among ``allowed`` (None: all); warns once about stale vectors."""
    ids, scores = cosines(cache, embedder, query_vector)
    return top_hits(ids, scores, allowed, depth)
