"""A graph-backed scope that becomes a scope of conversation turns holds its vectors in 8 bits.

A scope's vectors are quantised when a graph first backs it (:meth:`~.index_cache.ScopeCache.release`):
4 bits a component when its searches re-score their hits from the engine's floats (:mod:`.ann_exact`),
8 in a scope of conversation turns, whose context profiles score every vector from the index itself
(the conversation-context vector field reads each neighbour's cosine: no graph, no exact pass, and
a 4-bit cosine is off by about 0.005 where 8 bits keep it within 0.001). The choice is made once,
so a scope quantised before its first turn arrived kept 4 bits. :func:`widen` makes it again when
the scope holds turns: each 4-bit index is held anew in 8 bits from the float vectors the engine
stores (read as the exact pass reads them, a few thousand at a time, once per scope and process);
a vector the engine no longer holds as the cache has it keeps its 4-bit values until it changes.
"""

from __future__ import annotations

from ...engines import Engine
from ...index.mirror import CHUNK
from ...index.vectors import VectorIndex
from . import ann_exact
from .index_cache import ScopeCache
from .layout import ScopeKeys

__all__ = ["widen"]


def widen(engine: Engine, keys: ScopeKeys, cache: ScopeCache) -> bool:
    """Hold every 4-bit vector index of a scope with conversation turns in 8 bits (caller holds
    ``cache.lock``, the cache fresh); True when one was. A read of the engine, never a write.

    Raises:
        EngineError: the engine failed (the cache is left as it was).
    """
    if not len(cache.threads):
        return False
    narrow = [(key, index) for key, index in cache.vector_indexes.items() if index.quantised == 4]
    for (model, dim), index in narrow:
        ids = index.ids()
        rows = index.gather(ids).T  # the 4-bit values, for what the engine does not give
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            wanted = ann_exact.digests(cache, chunk, model)
            found, ok = ann_exact.read(engine, keys, model, dim, chunk, wanted)
            rows[start : start + len(chunk)][ok] = found[ok]
        wider = VectorIndex(dim)
        wider.extend(ids, rows)
        wider.quantise(8)
        cache.vector_indexes[(model, dim)] = wider
    if narrow:
        cache.derived = {}  # matrices taken from the 4-bit indexes
    return bool(narrow)
