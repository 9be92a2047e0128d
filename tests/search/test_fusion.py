"""fuse() profiles and cosine()."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memstack.foundation.errors import InvalidConfiguration, InvalidInput
from memstack.search import FUSION_PROFILES, FusionProfile, Hit, cosine, fuse
from memstack.search.evidence import Background
from memstack.search.fusion import FuseOptions, fuse_rows


def _scores(hits: list[Hit]) -> list[tuple[str, float]]:
    return [(h.id, round(h.score, 6)) for h in hits]


# -- rockbot: RockBot's HybridRanker ------------------------------------------------------------------


def test_rockbot_normalises_bm25_by_max_and_averages() -> None:
    hits = fuse([("a", 4.0), ("b", 2.0)], [("b", 0.8), ("c", 0.7)], "rockbot")
    assert _scores(hits) == [("a", 1.0), ("c", 0.7), ("b", 0.65)]
    b = hits[2]
    assert (b.bm25, b.vector, b.sources) == (2.0, 0.8, ("bm25", "vector"))
    assert hits[0].sources == ("bm25",)
    assert hits[1].sources == ("vector",)
    assert hits[1].bm25 is None


def test_rockbot_quirk_both_found_is_demoted() -> None:
    hits = fuse([("solo", 1.0), ("both", 1.0)], [("both", 0.6)], "rockbot")
    assert _scores(hits) == [("solo", 1.0), ("both", 0.8)]


def test_rockbot_vector_threshold_default_half() -> None:
    hits = fuse([], [("x", 0.5), ("y", 0.4999), ("z", -0.9)], "rockbot")
    assert _scores(hits) == [("x", 0.5)]
    assert _scores(fuse([], [("y", 0.45)], "rockbot", min_similarity=0.4)) == [("y", 0.45)]


def test_rockbot_empty_or_nonpositive_bm25_gives_no_bm25_scores() -> None:
    assert fuse([], [], "rockbot") == []
    assert fuse([("a", 0.0)], [], "rockbot") == []
    assert _scores(fuse([("a", 0.0)], [("a", 0.9)], "rockbot")) == [("a", 0.9)]


def test_rockbot_ids_are_case_insensitive() -> None:
    hits = fuse([("Abc", 2.0)], [("aBC", 0.6)], "rockbot")
    assert len(hits) == 1
    assert hits[0].id == "Abc"
    assert hits[0].score == pytest.approx(0.8)


# -- default and rrf ---------------------------------------------------------------------------------


def test_default_does_not_penalise_entries_both_retrievers_found() -> None:
    hits = fuse([("solo", 1.0), ("both", 1.0)], [("both", 0.6)])
    assert [h.id for h in hits] == ["both", "solo"]
    assert hits[0].score > hits[1].score


def test_equal_weighted_sum_of_min_max_scores() -> None:
    prof = FUSION_PROFILES["equal"]
    assert (prof.method, prof.normalise, prof.min_similarity) == ("weighted", "min-max", 0.3)
    assert (prof.bm25_weight, prof.vector_weight) == (0.5, 0.5)
    hits = fuse(
        [("a", 3.0), ("b", 1.5), ("e", 1.0)], [("b", 0.9), ("c", 0.5), ("f", 0.4), ("d", 0.1)], "equal"
    )
    want = {
        "a": 0.5 * 1.0,  # best BM25 candidate
        "b": 0.5 * (0.5 / 2.0) + 0.5 * 1.0,  # BM25 (1.5 - 1) / (3 - 1); best cosine
        "c": 0.5 * (0.1 / 0.5),  # cosine (0.5 - 0.4) / (0.9 - 0.4)
        "e": 0.0,  # worst BM25 candidate
        "f": 0.0,  # worst cosine kept
    }
    assert {h.id: h.score for h in hits} == pytest.approx(want)
    assert "d" not in {h.id for h in hits}  # below the default threshold: not a candidate, not the minimum
    b = next(h for h in hits if h.id == "b")
    assert (b.bm25, b.vector, b.sources) == (1.5, 0.9, ("bm25", "vector"))  # raw scores are reported
    assert [h.id for h in hits[:3]] == ["b", "a", "c"]


def test_default_weighs_bm25_0_6_and_vectors_0_4() -> None:
    prof = FUSION_PROFILES["default"]
    assert (prof.method, prof.normalise, prof.min_similarity) == ("weighted", "min-max", 0.3)
    assert (prof.bm25_weight, prof.vector_weight) == (0.6, 0.4)
    hits = fuse([("a", 3.0), ("b", 1.0)], [("b", 0.9), ("c", 0.5)])
    assert [h.id for h in hits] == ["a", "b", "c"]
    assert [h.score for h in hits] == pytest.approx([0.6, 0.4, 0.0])


def test_default_single_or_equal_scores_normalise_to_one() -> None:
    assert _scores(fuse([("a", 2.0)], [("b", 0.4)])) == [("a", 0.6), ("b", 0.4)]
    assert _scores(fuse([("a", 2.0), ("b", 2.0)], [("b", 0.7)])) == [("b", 1.0), ("a", 0.6)]
    assert fuse([], []) == []
    assert fuse([("a", 0.0)], [("b", 0.1)]) == []  # no positive BM25 score, cosine below 0.3


def test_min_max_with_the_rockbot_mean() -> None:
    prof = FusionProfile(name="mm-mean", method="mean", normalise="min-max")
    hits = fuse([("a", 4.0), ("b", 2.0)], [("b", 0.8), ("c", 0.6)], prof)
    # b: BM25 (2 - 2) / (4 - 2) = 0 and cosine (0.8 - 0.6) / (0.8 - 0.6) = 1, averaged
    assert _scores(hits) == [("a", 1.0), ("b", 0.5), ("c", 0.0)]


def test_weighted_raw_is_the_previous_default() -> None:
    prof = FUSION_PROFILES["weighted-raw"]
    assert (prof.method, prof.normalise, prof.min_similarity) == ("weighted", "bm25-max", 0.3)
    hits = fuse([("a", 3.0), ("b", 1.5)], [("b", 0.9), ("c", 0.5), ("d", 0.1)], "weighted-raw")
    want = {"a": 0.5 * 1.0, "b": 0.5 * 0.5 + 0.5 * 0.9, "c": 0.5 * 0.5}
    assert {h.id: h.score for h in hits} == pytest.approx(want)
    assert _scores(fuse([("solo", 1.0), ("both", 1.0)], [("both", 0.6)], "weighted-raw"))[0][0] == "both"


def test_default_ids_are_exact() -> None:
    assert len(fuse([("A", 1.0)], [("a", 0.9)])) == 2


def test_custom_weights_as_data() -> None:
    prof = FusionProfile(name="vec-heavy", method="weighted", bm25_weight=0.2, vector_weight=0.8)
    hits = fuse([("a", 1.0)], [("b", 0.9)], prof)
    assert [h.id for h in hits] == ["b", "a"]


def test_rrf_scores() -> None:
    hits = fuse([("a", 9.0), ("b", 3.0)], [("b", 0.9), ("c", 0.8)], "rrf")
    got = {h.id: h.score for h in hits}
    assert got == pytest.approx({"a": 0.5 / 61, "b": 0.5 / 62 + 0.5 / 61, "c": 0.5 / 62})
    assert hits[0].id == "b"


def test_k_and_ties_keep_first_appearance() -> None:
    hits = fuse([("a", 1.0), ("b", 1.0)], [("c", 1.0)], "rockbot")
    assert [h.id for h in hits] == ["a", "b", "c"]
    assert [h.id for h in fuse([("a", 1.0), ("b", 1.0)], [], "rockbot", k=1)] == ["a"]


def test_bad_fusion_arguments() -> None:
    with pytest.raises(InvalidConfiguration, match="nope"):
        fuse([], [], "nope")
    with pytest.raises(InvalidInput, match="k=-2"):
        fuse([], [], k=-2)
    with pytest.raises(InvalidInput, match="min_similarity"):
        fuse([], [], min_similarity=math.nan)
    with pytest.raises(InvalidConfiguration, match="method"):
        FusionProfile(name="x", method="max")  # type: ignore[arg-type]  # the point of the test
    with pytest.raises(InvalidConfiguration, match="normalise"):
        FusionProfile(name="x", method="weighted", normalise="z")  # type: ignore[arg-type]  # the point
    with pytest.raises(InvalidConfiguration, match="bm25_weight"):
        FusionProfile(name="x", method="weighted", bm25_weight=-1)


# -- cosine ------------------------------------------------------------------------------


def test_cosine_values() -> None:
    assert cosine([1.0, 0.0], [1.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 2.0]) == pytest.approx(0.0)
    assert cosine([1.0, 1.0], [-1.0, -1.0]) == pytest.approx(-1.0)
    assert cosine(np.array([3.0, 4.0], dtype=np.float32), [4.0, 3.0]) == pytest.approx(24 / 25)


def test_cosine_degenerate_cases_are_zero() -> None:
    assert cosine([1.0, 2.0], [1.0, 2.0, 3.0]) == 0.0
    assert cosine([], []) == 0.0
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0
    assert cosine([1.0, 1.0], [0.0, 0.0]) == 0.0


@pytest.mark.parametrize("profile", sorted(FUSION_PROFILES))
def test_fuse_rows_are_the_hits_as_tuples(profile: str) -> None:
    bm25 = [("a", 3.0), ("B", 2.0), ("c", 2.0), ("d", 0.5)]
    vector = [("b", 0.9), ("e", 0.6), ("c", 0.6), ("f", 0.1)]
    rows = fuse_rows(bm25, vector, profile, min_similarity=0.2)
    assert [Hit(*row) for row in rows] == fuse(bm25, vector, profile, min_similarity=0.2)
    assert [row[4] for row in rows if row[0] == "f"] == []  # under the threshold


# -- tiny scopes: a complete vector list ---------------------------------------------------------------


def test_a_lone_vector_hit_is_ranked() -> None:
    (hit,) = fuse([], [("tea", 0.35)], depth=100)
    assert (hit.id, hit.score, hit.sources) == ("tea", pytest.approx(0.4), ("vector",))


def test_the_worst_hit_of_a_complete_vector_list_keeps_a_score() -> None:
    complete = fuse([], [("a", 0.5), ("b", 0.35)], depth=100)  # every vector of the scope
    assert _scores(complete) == [("a", 0.4), ("b", 0.1)]  # (0.35 - 0.3) / (0.5 - 0.3) x 0.4
    cut = fuse([], [("a", 0.5), ("b", 0.35)], depth=2)  # a longer list cut at its depth
    assert _scores(cut) == [("a", 0.4), ("b", 0.0)]


def test_a_full_list_ranks_exactly_as_without_a_depth() -> None:
    rng = np.random.default_rng(5)
    bm25 = [(f"d{i}", float(s)) for i, s in enumerate(sorted(rng.uniform(0, 9, 100), reverse=True))]
    order, cosines = rng.permutation(100), rng.uniform(0.2, 0.8, 100)
    vector = [(f"d{i}", float(s)) for i, s in zip(order, cosines, strict=True)]
    assert fuse_rows(bm25, vector, depth=100) == fuse_rows(bm25, vector)
    assert fuse_rows(bm25, vector, depth=101) != fuse_rows(bm25, vector)  # complete: normalised from 0.3


def test_fuse_weighs_evidence_by_the_mass_and_background_given() -> None:
    bm25, vector = [("a", 4.0), ("b", 2.0)], [("b", 0.8), ("c", 0.6)]
    options: FuseOptions = {"mass": 10.0, "background": Background(0.2, 0.1)}
    hits = fuse(bm25, vector, "evidence", **options)
    rows = fuse_rows(bm25, vector, "evidence", **options)
    assert [(h.id, h.score, h.bm25, h.vector, h.sources) for h in hits] == rows
    assert _scores(hits) != _scores(fuse(bm25, vector, "evidence"))  # without them: other scores
