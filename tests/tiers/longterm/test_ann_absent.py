"""Without the graph library (usearch, an ``embeddings`` extra) a scope above the threshold is
searched exactly, as below it."""

from __future__ import annotations

import pytest

from memstack.engines import Engine
from memstack.index import ann as graph
from memstack.index import registry
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory, index_cache

EMBEDDER = FakeEmbedder(dim=16)
TEXTS = [
    f"note {n} about {'tea' if n % 2 else 'jazz'} and {'rivers' if n % 3 else 'trains'}" for n in range(40)
]


def test_without_the_library_big_scopes_are_searched_exactly(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    lt = LongTermMemory(engine, "u", embedder=EMBEDDER)
    lt.save_many([{"id": f"e{n}", "content": text} for n, text in enumerate(TEXTS)])
    assert lt.flush_embeddings(timeout=30)
    monkeypatch.setattr(graph, "ANN_FROM", 10**9)
    exact = [(h.entry.id, h.score) for h in lt.search("jazz trains", limit=10)]
    registry.drop(("longterm", engine.identity, "u"))
    monkeypatch.setattr(graph, "ANN_FROM", 10)
    monkeypatch.setattr(graph, "available", lambda: False)
    assert [(h.entry.id, h.score) for h in lt.search("jazz trains", limit=10)] == exact
    assert index_cache.scope_cache(engine, "u").anns == {}
