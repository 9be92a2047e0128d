"""Hybrid search over one scope's cache: valid vectors, the vector matrix, cosine hits.

A stored vector is used only when it was computed by the current embedder (same model id and
dimension) from the entry's current text; vectors of another model are counted as stale and
reported once per scope and model.
"""

from __future__ import annotations

import logging
from typing import cast

import numpy as np

from ..search.embedders import Embedder
from .index_cache import ScopeCache
from .vectors import MAX_INPUT_CHARS, Matrix, rank_by_cosine, text_hash

__all__ = ["count_stale", "embed_query", "valid_vector_ids", "vector_hits", "vector_matrix"]

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
    """The valid vectors as one matrix (rows in id order), cached until the scope changes."""
    key = ("matrix", embedder.model_id, embedder.dim)
    found = cache.derived.get(key)
    if found is None:
        ids = valid_vector_ids(cache, embedder)
        rows = [cache.vectors[i].vector for i in ids]
        matrix = np.vstack(rows) if rows else np.zeros((0, embedder.dim), dtype=np.float32)
        found = cache.derived[key] = (ids, matrix)
    return cast(tuple[list[str], Matrix], found)  # derived holds what this function stored


def embed_query(embedder: Embedder | None, query: str | None) -> Matrix | None:
    """The query's vector, or None (no embedder, blank query, or a failure: then BM25 alone)."""
    if embedder is None or query is None or not query.strip():
        return None
    try:
        vector: Matrix = embedder.embed([query[:MAX_INPUT_CHARS]])[0]
    except Exception:  # any embedder failure degrades to BM25, as the seed does
        log.warning("embedding the query failed; searching with BM25 only", exc_info=True)
        return None
    return vector


def vector_hits(
    cache: ScopeCache, embedder: Embedder, query_vector: Matrix, allowed: set[str] | None, depth: int
) -> list[tuple[str, float]]:
    """The ``depth`` best ``(id, cosine)`` among ``allowed`` (None: all); warns once about stale vectors."""
    stale = count_stale(cache, embedder)
    if stale and embedder.model_id not in cache.warned:
        cache.warned.add(embedder.model_id)
        log.warning(
            "%d memory vector(s) in %s were computed by another model than %r (dim %d) and are not "
            "used; call reembed() to recompute them",
            stale, cache.name, embedder.model_id, embedder.dim,
        )  # fmt: skip
    ids, matrix = vector_matrix(cache, embedder)
    return rank_by_cosine(query_vector, ids, matrix, allowed)[:depth]
