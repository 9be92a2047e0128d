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

from ..search.embedders import Embedder, embed_queries
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
    "top_with_neighbours",
    "valid_vector_ids",
    "vector_hits",
    "vector_matrix",
    "with_neighbours",
]

Scores = npt.NDArray[np.float32]
Rows = npt.NDArray[np.int64]

log = logging.getLogger("memstack.longterm")


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
    """The valid vectors as one ``(dim, n)`` matrix, one *column* per id (ids in order), cached until the
    scope changes. Columns, because ``query @ matrix`` over that layout measured about twice as fast as
    ``rows @ query`` (100,000 x 384: ~7 ms against ~15-25 ms on a shared 2-core machine)."""
    key = ("matrix", embedder.model_id, embedder.dim)
    found = cache.derived.get(key)
    if found is None:
        ids = valid_vector_ids(cache, embedder)
        rows = [cache.vectors[i].vector for i in ids]
        matrix = np.ascontiguousarray(np.vstack(rows).T) if rows else np.zeros((embedder.dim, 0), np.float32)
        found = cache.derived[key] = (ids, matrix)
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
        ids, _ = vector_matrix(cache, embedder)
        row = row_index(cache, embedder)
        table = np.full((len(ids), 2 * window), -1, dtype=np.int64)
        for n, entry_id in enumerate(ids):
            near = [row[i] for i in cache.threads.neighbours(entry_id, window) if i in row]
            table[n, : len(near)] = near
        found = cache.derived[key] = table
    return cast(npt.NDArray[np.int64], found)  # derived holds what this function stored


def with_neighbours(scores: Scores, neighbours: npt.NDArray[np.int64], weight: float) -> Scores:
    """``score + weight · max(0, best neighbour score)`` per row (the vector side of the context field)."""
    if neighbours.shape[1] == 0 or not len(scores):
        return scores
    padded = np.append(scores, np.float32(0.0))  # row -1 reads this 0
    best = np.maximum(padded[neighbours].max(axis=1), 0.0)
    out: Scores = (scores + np.float32(weight) * best).astype(np.float32)
    return out


def top_with_neighbours(
    ids: list[str],
    scores: Scores,
    neighbours: npt.NDArray[np.int64],
    weight: float,
    allowed: set[str] | None,
    depth: int,
    row_of: Mapping[str, int] | None = None,
) -> list[tuple[str, float]]:
    """``top_hits(ids, with_neighbours(scores, neighbours, weight), allowed, depth)``, exactly, without
    computing every row's neighbour score (5-6 ms at 100,000 rows; ``bench/search_speed.py
    --conversations``).

    Only the ``m`` best rows by their own score and their neighbours are scored. A row outside that
    set has its own score and every neighbour's at most the ``m``-th best (``c``): a neighbour above
    ``c`` is among the ``m``, and neighbourhood is symmetric, so the row would be in the set. Its
    score is thus at most ``c + weight * max(c, 0)``; when the ``depth``-th best of the set is above
    that bound, nothing outside can enter (nor tie), else ``m`` grows, up to every row.
    """
    n = len(scores)
    if neighbours.shape[1] == 0 or depth <= 0 or n == 0:
        return top_hits(ids, scores, allowed, depth, row_of)
    w = np.float32(weight)
    padded = np.append(scores, np.float32(0.0))  # row -1 reads this 0
    m = 4 * depth
    while m < n:
        seeds = np.argpartition(scores, n - m)[n - m :]
        cut = scores[seeds].min()
        mask = np.zeros(n + 1, dtype=bool)  # slot n takes the -1s ("no neighbour")
        mask[seeds] = True
        mask[neighbours[seeds].ravel()] = True
        rows = np.flatnonzero(mask[:n])  # np.unique costs ~1 ms on a few thousand rows here
        if allowed is not None:
            rows = rows[np.fromiter((ids[r] in allowed for r in rows), dtype=bool, count=len(rows))]
        if len(rows) >= depth:
            best = np.maximum(padded[neighbours[rows]].max(axis=1), 0.0)
            adjusted: Scores = (scores[rows] + w * best).astype(np.float32)
            order = np.lexsort((rows, -adjusted))[:depth]
            bound = np.float32(cut + w * np.maximum(cut, np.float32(0.0)))
            if adjusted[order[-1]] > bound:
                return [(ids[rows[k]], float(adjusted[k])) for k in order]
        m *= 4
    return top_hits(ids, with_neighbours(scores, neighbours, weight), allowed, depth, row_of)


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
    return [(ids[n], float(scores[n])) for n in chosen]


def vector_hits(
    cache: ScopeCache, embedder: Embedder, query_vector: Matrix, allowed: set[str] | None, depth: int
) -> list[tuple[str, float]]:
    """The ``depth`` best ``(id, cosine)`` among ``allowed`` (None: all); warns once about stale vectors."""
    ids, scores = cosines(cache, embedder, query_vector)
    return top_hits(ids, scores, allowed, depth)
