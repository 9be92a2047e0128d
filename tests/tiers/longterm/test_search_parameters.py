"""The canonical search parameters of ``LongTermMemory.search`` on every engine: mode, metadata
equality, limit (and the seed's ``max_results``), min_score."""

from __future__ import annotations

import pytest

from memstack.engines import Engine
from memstack.foundation.errors import InvalidValue
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory


@pytest.fixture
def memories(engine: Engine) -> LongTermMemory:
    memories = LongTermMemory(engine, "params")
    memories.save(content="tea in the morning", metadata={"source": "chat", "n": 1})
    memories.save(content="tea at night", metadata={"source": "email", "n": True})
    memories.save(content="coffee at noon", metadata={"source": "chat", "nested": {"a": [1, 2]}})
    return memories


def contents(hits: list) -> list[str]:  # type: ignore[type-arg]  # SearchHit list, kept short
    return sorted(h.entry.content for h in hits)


def test_metadata_equality_filters_ranked_and_recency_searches(memories: LongTermMemory) -> None:
    assert contents(memories.search("tea", metadata={"source": "chat"})) == ["tea in the morning"]
    assert contents(memories.search(None, metadata={"source": "chat"})) == [
        "coffee at noon",
        "tea in the morning",
    ]
    assert contents(memories.search(None, metadata={"nested": {"a": [1, 2]}})) == ["coffee at noon"]
    # 1 and true are equal in Python but not in JSON: each matches only itself
    assert contents(memories.search(None, metadata={"n": 1})) == ["tea in the morning"]
    assert contents(memories.search(None, metadata={"n": True})) == ["tea at night"]
    assert memories.search(None, metadata={"missing": None}) == []


def test_limit_and_the_seed_alias(memories: LongTermMemory) -> None:
    assert len(memories.search(None, limit=1)) == 1
    assert len(memories.search(None, max_results=2)) == 2
    assert len(memories.search(None, limit=2, max_results=2)) == 2
    with pytest.raises(InvalidValue, match="give one of them"):
        memories.search(None, limit=1, max_results=2)
    with pytest.raises(InvalidValue, match=r"^limit 0: must be an int >= 1"):
        memories.search(None, limit=0)
    with pytest.raises(InvalidValue, match=r"^max_results 0"):
        memories.search(None, max_results=0)


def test_min_score_drops_weak_ranked_hits(memories: LongTermMemory) -> None:
    scores = [h.score for h in memories.search("tea morning")]
    assert len(scores) == 2 and scores[0] > scores[1]
    kept = memories.search("tea morning", min_score=(scores[0] + scores[1]) / 2)
    assert [h.entry.content for h in kept] == ["tea in the morning"]
    with pytest.raises(InvalidValue, match="min_score"):
        memories.search("tea", min_score=float("nan"))


def test_modes(engine: Engine, memories: LongTermMemory) -> None:
    with pytest.raises(InvalidValue, match=r"mode .hybrid.*no embedder"):
        memories.search("tea", mode="hybrid")
    with pytest.raises(InvalidValue, match="must be one of auto, bm25, hybrid"):
        memories.search("tea", mode="vector")
    hybrid = LongTermMemory(engine, "params", embedder=FakeEmbedder(dim=64))
    hybrid.reembed()
    assert "vector" in {s for h in hybrid.search("tea", mode="hybrid") for s in h.sources}
    assert {s for h in hybrid.search("tea", mode="bm25") for s in h.sources} == {"bm25"}


@pytest.mark.parametrize("bad", [[("k", 1)], "k=1", {1: "x"}, {"k": float("nan")}])
def test_bad_metadata_filters_are_refused(memories: LongTermMemory, bad: object) -> None:
    with pytest.raises(InvalidValue, match="metadata"):
        memories.search(None, metadata=bad)  # type: ignore[arg-type]  # the point of the test


def test_a_filtered_search_sees_every_change_since_the_last(engine: Engine) -> None:
    memories = LongTermMemory(engine, "masks")
    first = memories.save(content="tea notes", tags=["a"])
    memories.save(content="tea elsewhere", tags=["b"])
    assert [h.entry.id for h in memories.search("tea", tags=["a"])] == [first.id]  # mask made here
    second = memories.save(content="more tea", tags=["a"])
    assert {h.entry.id for h in memories.search("tea", tags=["a"])} == {first.id, second.id}
    memories.save(id=first.id, content="tea notes", tags=["b"])  # moved out of the filter
    memories.delete(second.id)
    assert memories.search("tea", tags=["a"]) == []


def test_a_mask_search_equals_an_id_search() -> None:
    from memstack.search import Bm25Index

    index = Bm25Index()
    for n in range(50):
        index.add(f"d{n}", f"tea {'green' if n % 3 else 'black'} number {n}")
    index.remove("d4")
    allowed = {f"d{n}" for n in range(0, 50, 2)}
    assert index.search("green tea", 10, index.mask(allowed)) == index.search("green tea", 10, allowed)
