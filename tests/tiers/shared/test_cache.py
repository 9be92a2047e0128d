"""The semantic cache on every engine, with the deterministic fake embedder."""

from __future__ import annotations

import pytest

from memstack import ManualClock
from memstack.engines import Engine
from memstack.foundation.errors import InvalidConfiguration, InvalidValue
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.shared import SemanticCache, SharedMemory


@pytest.fixture
def cache(engine: Engine) -> SemanticCache:
    return SemanticCache(engine, "c", embedder=FakeEmbedder(dim=64))


def test_fetch_miss_then_hit(cache: SemanticCache) -> None:
    calls: list[str] = []

    def compute() -> dict[str, str]:
        calls.append("x")
        return {"answer": "a language"}

    assert cache.fetch("What is Ruby?", compute) == {"answer": "a language"}
    assert cache.fetch("what is ruby", compute) == {"answer": "a language"}
    assert cache.fetch("How do tides work on Mars?", compute) == {"answer": "a language"}
    assert len(calls) == 2
    assert cache.stats() == {"hits": 1, "misses": 2, "hit_rate": 1 / 3, "entries": 2}


def test_store_search_exists_delete(cache: SemanticCache) -> None:
    assert cache.stats() == {"hits": 0, "misses": 0, "hit_rate": 0.0, "entries": 0}
    cache.store("capital of France", "Paris", metadata={"src": "atlas"})
    cache.store("tallest mountain on earth", "Everest")
    [best, second] = cache.search("The capital of France?", limit=5)
    assert (best["query"], best["response"], best["metadata"]) == (
        "capital of France",
        "Paris",
        {"src": "atlas"},
    )
    assert best["similarity"] > second["similarity"]
    assert cache.exists("capital of france")
    assert not cache.exists("recipe for pancakes")
    assert cache.delete("Capital of France") is True
    assert cache.delete("Capital of France") is False
    assert [e["response"] for e in cache.search("capital of France")] == ["Everest"]


def test_put_is_a_deprecated_store_that_counts_a_miss(cache: SemanticCache) -> None:
    with pytest.warns(DeprecationWarning, match="use store"):
        entry_id = cache.put("capital of France", "Paris", metadata={"src": "atlas"}, miss=True)
    [hit] = cache.search("capital of France", limit=1)
    assert (hit["id"], hit["response"], hit["metadata"]) == (entry_id, "Paris", {"src": "atlas"})
    assert cache.stats()["misses"] == 1


def test_invalidate_and_clear(cache: SemanticCache) -> None:
    for i in range(3):
        cache.store("weather in Paris today", f"r{i}")
    cache.store("unrelated question about jazz", "j")
    assert cache.invalidate("weather in Paris today", limit=2) == 2
    assert cache.invalidate("weather in Paris today") == 1
    assert cache.stats()["entries"] == 1
    cache.clear()
    assert cache.stats()["entries"] == 0
    assert cache.search("jazz") == []


def test_ttl_uses_engine_clock(engine: Engine, clock: ManualClock) -> None:
    cache = SemanticCache(engine, "ttl", embedder=FakeEmbedder(dim=64), ttl=10)
    cache.store("short lived", "v")
    cache.store("long lived entry", "w", ttl=100)
    clock.advance(10.5)
    assert not cache.exists("short lived")
    assert cache.fetch("short lived", lambda: "recomputed") == "recomputed"
    assert cache.exists("long lived entry")
    assert cache.stats()["entries"] == 2


def test_shared_between_instances_and_models(engine: Engine) -> None:
    first = SemanticCache(engine, "c2", embedder=FakeEmbedder(dim=64))
    first.store("hello world", "hi")
    second = SemanticCache(engine, "c2", embedder=FakeEmbedder(dim=64))
    assert second.fetch("Hello, world!", lambda: "computed") == "hi"
    other_model = SemanticCache(engine, "c2", embedder=FakeEmbedder(dim=32))
    assert other_model.search("hello world") == []  # never compared across models


def test_validation(engine: Engine, cache: SemanticCache) -> None:
    with pytest.raises(InvalidConfiguration, match="threshold"):
        SemanticCache(engine, "c", embedder=FakeEmbedder(), threshold=1.5)
    with pytest.raises(InvalidConfiguration, match="ttl"):
        SemanticCache(engine, "c", embedder=FakeEmbedder(), ttl=0)
    with pytest.raises(InvalidValue):
        cache.store("q", {1, 2})
    with pytest.raises(InvalidValue):
        cache.fetch("q", lambda: object())
    assert cache.stats()["entries"] == 0


def test_memory_cache_is_a_semantic_cache(engine: Engine) -> None:
    memory = SharedMemory(engine, "withcache", embedder=FakeEmbedder(dim=64))
    assert isinstance(memory.cache, SemanticCache)
    assert memory["cache"] is memory.cache
    assert memory.cache.fetch("What is Ruby?", lambda: "lang") == "lang"
    memory.reset()
    assert memory.cache.exists("what is ruby")  # reset keeps the cache
    assert "cache" not in memory.to_dict()
    memory.close()
