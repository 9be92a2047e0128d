"""Score propagation along conversations: pure functions over hand-made scores and threads."""

from __future__ import annotations

import math

import pytest

from memstack.foundation.errors import InvalidInput
from memstack.search.propagation import named_words, propagate, session_boost, speaker_boost

# one conversation a1..a5 in turn order, plus b1 alone
ORDER = ["a1", "a2", "a3", "a4", "a5"]


def window(entry_id: str, size: int = 1) -> list[str]:
    if entry_id not in ORDER:
        return []
    at = ORDER.index(entry_id)
    return ORDER[max(0, at - size) : at] + ORDER[at + 1 : at + 1 + size]


def ranking(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda i: -scores[i])


def test_a_turn_next_to_a_strong_hit_overtakes_an_isolated_weak_one() -> None:
    scores = {"a1": 1.0, "a2": 0.3, "b1": 0.4, "a4": 0.35}
    out = propagate(scores, window, 0.3)
    assert out["a2"] == pytest.approx(0.3 + 0.3 * 1.0)
    assert out["b1"] == pytest.approx(0.4)  # no neighbours: unchanged
    assert out["a1"] == pytest.approx(1.0 + 0.3 * 0.3)
    assert ranking(out)[:2] == ["a1", "a2"]
    assert ranking(out).index("a2") < ranking(out).index("b1")


def test_unscored_neighbours_enter_below_the_hit_that_brought_them() -> None:
    out = propagate({"a3": 1.0}, window, 0.5)
    assert set(out) == {"a2", "a3", "a4"}
    assert out["a2"] == out["a4"] == pytest.approx(0.5)
    assert ranking(out)[0] == "a3"
    assert list(out) == ["a3", "a2", "a4"]  # scored ids first, then added neighbours in order


def test_allowed_keeps_filtered_out_neighbours_out() -> None:
    out = propagate({"a3": 1.0}, window, 0.5, allowed=lambda i: i != "a4")
    assert set(out) == {"a2", "a3"}


def test_propagation_is_one_step_and_order_independent() -> None:
    scores = {"a1": 1.0, "a2": 0.0, "a3": 0.0}
    forward = propagate(scores, window, 0.5)
    backward = propagate(dict(reversed(list(scores.items()))), window, 0.5)
    assert forward == backward
    assert forward["a3"] == pytest.approx(0.0)  # a2's new score does not flow on to a3
    assert forward["a4"] == pytest.approx(0.0)  # a neighbour of a3, which scored 0


def test_zero_weight_changes_nothing() -> None:
    scores = {"a1": 1.0, "b1": 0.5}
    assert propagate(scores, window, 0.0) == scores
    assert session_boost(scores, lambda i: i[0], 0.0) == scores
    assert speaker_boost(scores, lambda i: "Ann", "Ann?", 0.0) == scores


@pytest.mark.parametrize("weight", [-0.1, math.inf, math.nan])
def test_bad_weights_are_refused(weight: float) -> None:
    with pytest.raises(InvalidInput, match="weight"):
        propagate({}, window, weight)
    with pytest.raises(InvalidInput, match="weight"):
        session_boost({}, lambda i: None, weight)
    with pytest.raises(InvalidInput, match="weight"):
        speaker_boost({}, lambda i: None, "q", weight)


def test_turns_of_the_session_holding_the_best_hit_move_up_together() -> None:
    session = {"x1": "X", "x2": "X", "y1": "Y", "y2": "Y", "z": None}
    scores = {"x1": 1.0, "x2": 0.2, "y1": 0.3, "y2": 0.25, "z": 0.28}
    out = session_boost(scores, session.get, 0.3)
    assert out["x2"] == pytest.approx(0.2 + 0.3 * 1.0)
    assert out["y2"] == pytest.approx(0.25 + 0.3 * 0.3)
    assert out["z"] == pytest.approx(0.28)  # no session: unchanged
    assert ranking(out) == ["x1", "x2", "y1", "y2", "z"]
    assert set(out) == set(scores)  # sessions re-score, they never add turns


def test_turns_of_the_speaker_the_query_names_move_up() -> None:
    speaker = {"m1": "Melanie", "c1": "Caroline", "c2": "Caroline", "n": None}
    scores = {"c1": 0.5, "m1": 0.4, "c2": 0.1, "n": 0.45}
    out = speaker_boost(scores, speaker.get, "What did melanie paint?", 0.3)
    assert out["m1"] == pytest.approx(0.7)
    assert out["c1"] == pytest.approx(0.5) and out["n"] == pytest.approx(0.45)
    assert ranking(out)[0] == "m1"
    # any word of a longer name counts; a name that is only a prefix of a query word does not
    assert speaker_boost({"x": 0.0}, lambda i: "Ann Lee", "where does Lee live", 1.0) == {"x": 1.0}
    assert speaker_boost({"x": 0.0}, lambda i: "Ann", "Annual report", 1.0) == {"x": 0.0}


def test_named_words_are_casefolded_words() -> None:
    assert named_words("Where did JOHN-Paul go?") == {"where", "did", "john", "paul", "go"}
