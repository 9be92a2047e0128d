"""Vector hits: top-k selection with ties by row, filters, and the neighbour bonus of the context field."""

from __future__ import annotations

import numpy as np
import pytest

from memstack.longterm.hybrid import top_hits, with_neighbours

IDS = [f"i{n}" for n in range(6)]
SCORES = np.array([0.1, 0.5, 0.5, 0.9, 0.2, 0.5], dtype=np.float32)


def test_top_hits_best_first_ties_by_row() -> None:
    assert [i for i, _ in top_hits(IDS, SCORES, None, 3)] == ["i3", "i1", "i2"]
    assert [i for i, _ in top_hits(IDS, SCORES, None, 10)] == ["i3", "i1", "i2", "i5", "i4", "i0"]
    assert [i for i, _ in top_hits(IDS, SCORES, {"i0", "i2", "i4", "i5"}, 2)] == ["i2", "i5"]
    assert top_hits(IDS, SCORES, None, 0) == [] and top_hits(IDS, SCORES, set(), 3) == []
    assert top_hits(IDS, SCORES, None, 1) == [("i3", pytest.approx(0.9))]


def test_top_hits_equals_a_full_sort_on_random_scores() -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 20, 500).astype(np.float32)  # many ties
    ids = [f"e{n}" for n in range(500)]
    want = sorted(range(500), key=lambda n: (-scores[n], n))[:37]
    assert [i for i, _ in top_hits(ids, scores, None, 37)] == [ids[n] for n in want]


def test_with_neighbours_adds_the_best_positive_neighbour() -> None:
    scores = np.array([0.2, 0.8, -0.5, 0.0], dtype=np.float32)
    neighbours = np.array([[1, -1], [0, 2], [1, 3], [2, -1]], dtype=np.int64)  # -1: no neighbour
    out = with_neighbours(scores, neighbours, 0.5)
    assert out.tolist() == pytest.approx([0.2 + 0.4, 0.8 + 0.1, -0.5 + 0.4, 0.0])  # negatives add nothing
    assert with_neighbours(scores, np.zeros((4, 0), dtype=np.int64), 0.5) is scores
