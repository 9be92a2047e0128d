"""Evidence fusion: BM25 counted by the share of the query's IDF mass it explains, the cosine by its
margin over the scope's background."""

from __future__ import annotations

import pytest

from memstack.foundation.errors import InvalidConfiguration
from memstack.search import Bm25Index
from memstack.search.evidence import Background, evidence_rows
from memstack.search.fusion import FusionProfile, fuse_rows, fused_terms


def _index() -> Bm25Index:
    index = Bm25Index()
    index.add("cilantro", "I can't stand cilantro, I like basil better")
    index.add("band", "My favourite band is Radiohead")
    index.add("walk", "I like long walks on the beach")
    index.add("tea", "I like green tea in the morning")
    return index


def test_a_common_word_explains_little_of_the_query() -> None:
    index = _index()
    query = "What music does she like?"
    bm25 = index.search(query)
    assert bm25 and bm25[0][0] != "band"  # "like" is all BM25 finds
    mass = index.query_mass(query)
    assert all(score / mass < 0.35 for _, score in bm25)  # "music" (unseen) carries most of the mass
    vector = [("band", 0.55), ("tea", 0.2), ("cilantro", 0.18), ("walk", 0.15)]
    rows = evidence_rows(
        bm25, vector, bm25_weight=0.65, vector_weight=0.35, vector_scale=3.0, vector_shift=1.5,
        mass=mass, background=Background(0.2, 0.1),
    )  # fmt: skip
    assert rows[0][0] == "band"


def test_a_full_match_of_rare_words_is_strong_evidence() -> None:
    index = _index()
    bm25 = index.search("Radiohead band")
    assert bm25[0][0] == "band"
    assert bm25[0][1] / index.query_mass("Radiohead band") > 0.6


def test_below_the_shift_a_cosine_only_orders_the_tail() -> None:
    rows = evidence_rows(
        [], [("a", 0.9), ("b", 0.1), ("c", 0.0)], bm25_weight=0.5, vector_weight=0.5,
        vector_scale=3.0, vector_shift=1.5, mass=None, background=Background(0.2, 0.2),
    )  # fmt: skip
    assert [r[0] for r in rows] == ["a", "b", "c"]
    assert rows[0][1] > 0 > rows[1][1] > rows[2][1]
    assert rows[1][1] > -0.01  # the tail slope is small: no evidence, only an order


def test_every_vector_candidate_is_kept_without_a_floor() -> None:
    rows = fuse_rows([], [("a", -0.4), ("b", 0.05)], "evidence", background=Background(0.0, 0.1))
    assert [r[0] for r in rows] == ["b", "a"]
    assert rows[0][4] == ("vector",)


def test_a_vector_scale_must_be_positive() -> None:
    with pytest.raises(InvalidConfiguration, match="vector_scale"):
        FusionProfile(name="x", method="evidence", vector_scale=0.0)


def test_the_terms_of_a_search_add_up_to_its_fused_scores() -> None:
    index = _index()
    query = "green tea like"
    bm25, mass, background = index.search(query), index.query_mass(query), Background(0.2, 0.1)
    vector = [("tea", 0.6), ("walk", 0.25), ("band", 0.1)]
    rows = fuse_rows(bm25, vector, "evidence", mass=mass, background=background)
    terms = fused_terms(bm25, "evidence", mass=mass, background=background)
    assert terms is not None
    for _, score, b, v, _sources in rows:
        bm25_part, vector_part = terms.parts(b, v)
        assert bm25_part + vector_part == pytest.approx(score)
        assert (bm25_part == 0) == (b is None) and (vector_part == 0) == (v is None)
    assert terms.parts(None, None) == (0.0, 0.0)
    assert fused_terms(bm25, "default", mass=mass, background=background) is None  # min-max: no such sum
