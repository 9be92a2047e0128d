"""The turns' second ranking stage as arrays: its features and the re-scored sum."""

from __future__ import annotations

import numpy as np
import pytest

from memstack.search.turn_rerank import (
    FEATURES,
    MISSING_Z,
    SESSION_TOP,
    WEIGHTS,
    TurnHead,
    features,
    rescored,
)


def head(n: int = 3, **kw: object) -> TurnHead:
    base: dict[str, object] = {
        "words": np.full(n, 12, dtype=np.int64),
        "questions": np.zeros(n, dtype=np.bool_),
        "scores": np.linspace(1.0, 0.5, n),
        "bm25_parts": np.full(n, 0.2),
        "vector_parts": np.zeros(n),
        "sessions": np.zeros(n, dtype=np.int64),
        "neighbours": np.full((n, 2), -1, dtype=np.int64),
        "z": np.zeros(n),
        "neighbour_z": np.full(n, MISSING_Z),
    }
    base.update(kw)
    return TurnHead(**base)  # type: ignore[arg-type]


def test_every_feature_has_a_weight_and_the_score_counts_once() -> None:
    assert set(WEIGHTS) == set(FEATURES)
    assert WEIGHTS["score"][0] == 1.0


def test_a_question_and_a_short_turn_lose_to_a_statement() -> None:
    same = head(2, scores=np.array([0.8, 0.8]))
    base = rescored(same)
    asked = rescored(head(2, scores=np.array([0.8, 0.8]), questions=np.array([True, False])))
    assert asked[0] < base[0] and asked[1] == base[1]  # the other turn is untouched
    short = rescored(head(2, scores=np.array([0.8, 0.8]), words=np.array([2, 12], dtype=np.int64)))
    assert short[0] < base[0]


def test_session_features_count_the_first_candidates_only() -> None:
    n = SESSION_TOP + 5
    sessions = np.zeros(n, dtype=np.int64)
    sessions[-1] = 7  # its own session, outside the first SESSION_TOP
    sessions[1] = -1  # no session: a session of its own
    found = features(head(n, sessions=sessions))
    hits = found[:, FEATURES.index("session_hits")]
    best = found[:, FEATURES.index("session_best")]
    assert hits[0] == SESSION_TOP - 1 and hits[1] == 1 and hits[-1] == 0
    assert best[-1] == 0.0 and best[1] == found[1, FEATURES.index("score")]


def test_neighbour_score_reads_candidates_only() -> None:
    found = features(head(3, neighbours=np.array([[-1, 1], [0, 2], [1, -1]], dtype=np.int64)))
    near = found[:, FEATURES.index("neighbour_score")]
    scores = found[:, FEATURES.index("score")]
    assert near.tolist() == [scores[1], max(scores[0], scores[2]), scores[1]]
    assert features(head(0)).shape == (0, len(FEATURES))


def test_rescored_reads_the_table_it_is_given() -> None:
    turns = head(3, questions=np.array([True, False, False]))
    assert rescored(turns, WEIGHTS).tolist() == rescored(turns).tolist()
    louder = dict(WEIGHTS, question=(-5.0, WEIGHTS["question"][1]))
    moved = rescored(turns, louder) - rescored(turns)
    # the question falls further than the statements (a changed weight shifts every turn by the mean)
    assert moved[0] < moved[1] - 1.0 and moved[1] == pytest.approx(moved[2])
