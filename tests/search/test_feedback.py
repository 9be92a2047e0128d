"""Pseudo-relevance feedback: RM3 weights, Rocchio vectors, and both as profile options of a search."""

from __future__ import annotations

import numpy as np
import pytest

from memstack import Memory
from memstack.foundation.errors import InvalidInput
from memstack.search import Bm25Index
from memstack.search.embedders import FakeEmbedder
from memstack.search.feedback import rm3_weights, rocchio
from memstack.search.retrieval import SEARCH_PROFILES, SearchProfile


def test_rm3_mixes_query_and_feedback_distributions() -> None:
    weights = rm3_weights(
        ["jazz"],
        [(["jazz", "saxophon", "saxophon", "club"], 2.0), (["jazz", "club"], 1.0), (["ignored"], 0.0)],
        terms=3,
        query_weight=0.5,
    )
    assert sum(weights.values()) == pytest.approx(1.0)
    # P(w|R): doc 1 weighs 2/3, doc 2 1/3; jazz = 2/3·1/4 + 1/3·1/2 = 1/3, saxophon = 1/3, club = 1/3
    assert weights == pytest.approx({"jazz": 0.5 + 0.5 / 3, "saxophon": 0.5 / 3, "club": 0.5 / 3})
    assert "ignored" not in weights


def test_rm3_keeps_only_the_most_likely_terms_and_falls_back_to_the_query() -> None:
    feedback = [(["a", "a", "a", "b", "b", "c"], 1.0)]
    assert set(rm3_weights(["q"], feedback, terms=2, query_weight=0.5)) == {"q", "a", "b"}
    assert rm3_weights(["q", "q", "r"], [], terms=5, query_weight=0.3) == pytest.approx(
        {"q": 2 / 3, "r": 1 / 3}
    )
    assert rm3_weights(["q"], feedback, terms=0, query_weight=0.3) == {"q": 1.0}
    assert rm3_weights([], feedback, terms=1, query_weight=0.5) == {"a": 1.0}  # only feedback: renormalised
    with pytest.raises(InvalidInput, match="query_weight"):
        rm3_weights(["q"], feedback, terms=1, query_weight=1.5)
    with pytest.raises(InvalidInput, match="terms"):
        rm3_weights(["q"], feedback, terms=-1, query_weight=0.5)


def test_weighted_terms_scale_bm25_contributions() -> None:
    index = Bm25Index()
    index.add_many([("a", "jazz club"), ("b", "jazz records"), ("c", "rock club")])
    one = dict(index.search_terms({"jazz": 1.0}))
    two = dict(index.search_terms({"jazz": 2.0}))
    assert two == pytest.approx({k: 2 * v for k, v in one.items()})
    assert [d for d, _ in index.search_terms({"jazz": 0.1, "club": 1.0})][:2] == ["a", "c"]
    assert [d for d, _ in index.search_terms({"jazz": 1.0, "club": 0.1})][:2] == ["a", "b"]
    assert index.search_terms({"jazz": 0.0, "club": -1.0}) == []
    assert index.search_terms({"jazz": 1.0}) == index.search("jazz")
    with pytest.raises(InvalidInput, match="finite"):
        index.search_terms({"jazz": float("inf")})


def test_rocchio_moves_the_query_towards_the_feedback() -> None:
    query = np.array([1.0, 0.0], dtype=np.float32)
    feedback = np.array([[0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    moved = rocchio(query, feedback, 1.0)
    assert moved == pytest.approx([2**-0.5, 2**-0.5])
    assert rocchio(query, feedback, 0.0) == pytest.approx([1.0, 0.0])
    assert rocchio(query, feedback[:0], 1.0) is query
    with pytest.raises(InvalidInput, match="weight"):
        rocchio(query, feedback, -1.0)
    with pytest.raises(InvalidInput, match="width"):
        rocchio(query, np.ones((1, 3), dtype=np.float32), 1.0)


def test_rm3_profile_finds_what_the_feedback_documents_share(mem: Memory) -> None:
    lt = mem.long_term("fb")
    lt.save(id="hit", content="saxophone jazz quartet")
    lt.save(id="hit2", content="jazz saxophone solo")
    lt.save(id="sax", content="saxophone lessons for beginners")  # no query word
    lt.save(id="other", content="gardening lessons for beginners")
    plain = [h.entry.id for h in mem.long_term("fb", profile="plain").search("jazz")]
    assert "sax" not in plain
    SEARCH_PROFILES["test-rm3"] = SearchProfile(
        name="test-rm3", rm3_docs=2, rm3_terms=5, rm3_query_weight=0.5
    )
    try:
        expanded = [h.entry.id for h in mem.long_term("fb", profile="test-rm3").search("jazz")]
    finally:
        del SEARCH_PROFILES["test-rm3"]
    assert expanded[:2] == plain[:2]
    assert "sax" in expanded and "other" not in expanded


def test_rocchio_profile_pulls_in_neighbours_of_the_best_vector_hits(mem: Memory) -> None:
    embedder = FakeEmbedder(dim=64)
    lt = mem.long_term("rv", embedder=embedder)
    lt.save(id="a", content="alpha beta")
    lt.save(id="b", content="beta gamma")
    lt.save(id="c", content="delta epsilon")
    assert lt.flush_embeddings(timeout=30)
    SEARCH_PROFILES["test-rocchio"] = SearchProfile(name="test-rocchio", rocchio_docs=1, rocchio_weight=2.0)
    try:
        plain = mem.long_term("rv", profile="plain", embedder=embedder, min_similarity=-1.0).search("alpha")
        moved = mem.long_term("rv", profile="test-rocchio", embedder=embedder, min_similarity=-1.0).search(
            "alpha"
        )
    finally:
        del SEARCH_PROFILES["test-rocchio"]
    cos_plain = {h.entry.id: h.vector for h in plain}
    cos_moved = {h.entry.id: h.vector for h in moved}
    assert cos_plain["b"] is not None and cos_moved["b"] is not None
    assert cos_moved["b"] > cos_plain["b"]  # "b" shares "beta" with the feedback document "a"
