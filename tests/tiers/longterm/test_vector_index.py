"""A scope's vector index (the kit's, per model) follows every change entry by entry and always
holds what building it afresh would: the vectors made by that model from each entry's current text."""

from __future__ import annotations

import numpy as np

from memstack import Memory
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import index_cache


def _held(cache: index_cache.ScopeCache, model: str, dim: int) -> dict[str, list[float]]:
    index = cache.vector_index(model, dim)
    return {i: np.round(c, 5).tolist() for i, c in zip(index.ids(), index.columns().T, strict=True)}


def test_the_vector_index_follows_changes(mem: Memory) -> None:
    embedder = FakeEmbedder(32)
    lt = mem.long_term("vi", embedder=embedder)
    for n in range(6):
        lt.save(id=f"e{n}", content=f"fact number {n} about tea")
    lt.flush_embeddings()
    assert [h.entry.id for h in lt.search("fact number 3", limit=1)] == ["e3"]  # builds the index
    cache = index_cache.scope_cache(mem.engine, "vi")
    lt.save(id="e1", content="now about coffee")  # its old vector is void at once
    lt.delete("e2")
    lt.flush_embeddings()  # e1's new vector arrives through the log
    lt.search("coffee")
    lt.save(id="e7", content="a late fact")
    lt.flush_embeddings()
    lt.search("coffee")
    with cache.lock:
        live = _held(cache, embedder.model_id, embedder.dim)
        assert sorted(live) == ["e0", "e1", "e3", "e4", "e5", "e7"]
    index_cache.clear_caches()
    fresh = index_cache.scope_cache(mem.engine, "vi")
    with fresh.lock:
        fresh.refresh(mem.engine, lt.keys)
        assert _held(fresh, embedder.model_id, embedder.dim) == live
    assert lt.search("coffee", limit=1)[0].entry.id == "e1"
