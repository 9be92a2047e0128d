"""The second ranking stage of a search over conversation turns, through LongTermMemory on every
engine: it re-orders the first fused turns, only in scopes of turns searched with vectors."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import numpy as np
import pytest

from memstack import Memory
from memstack.search.embedders import FakeEmbedder
from memstack.search.retrieval import SEARCH_PROFILES
from memstack.search.turn_rerank import FEATURES, TurnHead, features, rescored
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.provenance import conversation_metadata
from memstack.tiers.longterm.turn_head import watched

MAY = datetime(2023, 5, 8, tzinfo=UTC)
QUERY = "pottery class"


@pytest.fixture
def without_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    row = dataclasses.replace(SEARCH_PROFILES["default"], name="t-first-stage", turn_rerank=False)
    monkeypatch.setitem(SEARCH_PROFILES, row.name, row)


def fill(lt: LongTermMemory, *, turns: bool) -> None:
    texts = [
        "How was the pottery class?",
        "The pottery class was great, I made a bowl with a blue glaze and a small vase for my mother",
        "We should go hiking next weekend",
        "My dog loves the beach in the morning",
        "I started reading a novel about sailors",
        "The weather was awful all week",
    ]
    for n, text in enumerate(texts, 1):
        meta = conversation_metadata("c", n, "Ann" if n % 2 else "Bob", MAY) if turns else None
        lt.save(id=f"t{n}", content=text, metadata=meta, created_at=MAY)
    assert lt.flush_embeddings(timeout=30)


def order(mem: Memory, scope: str, profile: str, *, vectors: bool = True) -> list[str]:
    lt = mem.long_term(scope, profile=profile, embedder=FakeEmbedder(dim=64) if vectors else None)
    return [h.entry.id for h in lt.search(QUERY, max_results=10)]


@pytest.mark.usefixtures("without_stage")
def test_a_turn_that_states_something_passes_the_question_before_it(mem: Memory) -> None:
    fill(mem.long_term("s", embedder=FakeEmbedder(dim=64)), turns=True)
    # BM25 prefers the short question (same words, shorter turn); the second stage the answer
    assert order(mem, "s", "t-first-stage")[:2] == ["t1", "t2"]
    assert order(mem, "s", "default")[:2] == ["t2", "t1"]
    assert sorted(order(mem, "s", "default")) == sorted(order(mem, "s", "t-first-stage"))


@pytest.mark.usefixtures("without_stage")
def test_the_scores_rank_the_hits_and_stay_on_the_fused_scale(mem: Memory) -> None:
    fill(mem.long_term("s", embedder=FakeEmbedder(dim=64)), turns=True)
    hits = mem.long_term("s", embedder=FakeEmbedder(dim=64)).search(QUERY, max_results=10)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    first = mem.long_term("s", profile="t-first-stage", embedder=FakeEmbedder(dim=64)).search(QUERY)
    assert max(scores) < 2 * max(h.score for h in first)


@pytest.mark.usefixtures("without_stage")
def test_entries_without_provenance_and_bm25_alone_are_not_reordered(mem: Memory) -> None:
    fill(mem.long_term("n", embedder=FakeEmbedder(dim=64)), turns=False)
    assert order(mem, "n", "default") == order(mem, "n", "t-first-stage")
    fill(mem.long_term("s", embedder=FakeEmbedder(dim=64)), turns=True)
    assert order(mem, "s", "default", vectors=False) == order(mem, "s", "t-first-stage", vectors=False)


@pytest.mark.usefixtures("without_stage")
def test_watched_hands_over_the_head_the_stage_re_scores(mem: Memory) -> None:
    fill(mem.long_term("s", embedder=FakeEmbedder(dim=64)), turns=True)
    lt = mem.long_term("s", embedder=FakeEmbedder(dim=64))
    seen: list[tuple[list[str], TurnHead]] = []
    with watched(lambda rows, head: seen.append(([row[0] for row in rows], head))):
        hits = [h.entry.id for h in lt.search(QUERY, max_results=10)]
        first_stage = order(mem, "s", "t-first-stage")  # no second stage: nothing handed over
    lt.search(QUERY, max_results=10)  # outside the block: nothing either
    assert len(seen) == 1
    ids, head = seen[0]
    assert ids == first_stage  # the head is the fused, propagated order, before re-scoring
    assert features(head).shape == (len(ids), len(FEATURES))
    assert [ids[n] for n in np.argsort(-rescored(head), kind="stable")] == hits
    assert hits != first_stage  # the stage re-ordered them: the check above is not trivial
