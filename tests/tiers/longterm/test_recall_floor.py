"""No hidden floor: a search with vectors answers min(limit, entries) hits; ``min_score`` is the
caller's cut, on the fused score (memstack.search.evidence)."""

from __future__ import annotations

import pytest

from memstack import Memory
from memstack.search.embedders import FakeEmbedder

TEXTS = [
    "The boiler needs a new pressure valve",
    "Our cat sleeps on the windowsill all afternoon",
    "Invoice 4471 was paid on Tuesday",
    "Grandma's recipe uses three eggs and honey",
    "The tram line closes for repairs in May",
    "She prefers aisle seats on long flights",
    "The garden hose leaks near the tap",
]


def _filled(mem: Memory) -> object:
    memories = mem.long_term("floor", embedder=FakeEmbedder(dim=32))
    for n, text in enumerate(TEXTS):
        memories.save(id=f"e{n}", content=text)
    assert memories.flush_embeddings(timeout=30)
    return memories


def test_a_scope_with_vectors_answers_min_of_limit_and_entries(mem: Memory) -> None:
    memories = mem.long_term("floor", embedder=FakeEmbedder(dim=32))
    for n, text in enumerate(TEXTS):
        memories.save(id=f"e{n}", content=text)
    assert memories.flush_embeddings(timeout=30)
    unrelated = "quantum chromodynamics lecture notes"  # shares no word with any entry
    assert len(memories.search(unrelated, limit=5)) == 5
    hits = memories.search(unrelated, limit=20)
    assert sorted(h.entry.id for h in hits) == sorted(f"e{n}" for n in range(len(TEXTS)))
    assert all(h.vector is not None for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_min_score_keeps_only_hits_at_or_above_it(mem: Memory) -> None:
    memories = mem.long_term("floor", embedder=FakeEmbedder(dim=32))
    for n, text in enumerate(TEXTS):
        memories.save(id=f"e{n}", content=text)
    assert memories.flush_embeddings(timeout=30)
    everything = memories.search("the garden tap leaks", limit=20)
    cut = everything[2].score
    kept = memories.search("the garden tap leaks", limit=20, min_score=cut)
    assert [h.entry.id for h in kept] == [h.entry.id for h in everything if h.score >= cut]
    assert 3 <= len(kept) < len(everything)
    assert kept[0].entry.id == "e6"
    assert memories.search("the garden tap leaks", min_score=everything[0].score + 1) == []


def test_a_fused_score_is_explained_by_its_two_terms(mem: Memory) -> None:
    memories = _filled(mem)
    hits = memories.search("the garden tap leaks", limit=20)  # type: ignore[attr-defined]
    assert hits[0].entry.id == "e6" and hits[0].bm25_part > 0
    for hit in hits:
        assert hit.bm25_part is not None and hit.vector_part is not None
        assert hit.bm25_part + hit.vector_part == pytest.approx(hit.score)
        assert (hit.bm25_part > 0) == (hit.bm25 is not None)
    alone = mem.long_term("floor").search("the garden tap leaks")  # BM25 alone: the raw BM25 score
    assert alone[0].bm25_part is None and alone[0].vector_part is None
