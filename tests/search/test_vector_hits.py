"""Vector hits: top-k selection with ties by row, filters, and the neighbour bonus of the context field."""

from __future__ import annotations

import numpy as np
import pytest

from memstack.tiers.longterm.hybrid import allowed_rows, top_hits, with_neighbours

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


def _conversation_rows(n: int, window: int, rng: np.random.Generator) -> np.ndarray:
    """Neighbour rows of ``n`` rows cut into conversations of random lengths (symmetric, -1 padded)."""
    table = np.full((n, 2 * window), -1, dtype=np.int64)
    start = 0
    while start < n:
        end = min(n, start + int(rng.integers(1, 40)))
        for row in range(start, end):
            near = [r for r in range(row - window, row + window + 1) if start <= r < end and r != row]
            table[row, : len(near)] = near
        start = end
    return table


@pytest.mark.parametrize("seed", range(6))
def test_with_neighbours_equals_a_row_by_row_maximum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3000
    # Coarse values make ties; some negative cosines too.
    scores = (rng.integers(-5, 30, n) / 30).astype(np.float32)
    table = _conversation_rows(n, 2, rng)
    got = with_neighbours(scores, table, 0.5)
    for row in range(n):
        best = max([0.0, *(float(scores[r]) for r in table[row] if r >= 0)])
        assert got[row] == np.float32(scores[row] + np.float32(0.5) * np.float32(best)), row
    assert got.dtype == np.float32


def test_a_row_is_lifted_by_its_neighbour_past_rows_with_better_own_scores() -> None:
    # Row 0's own score is the lowest, but its neighbour (row 1) is the best: it must come second.
    n = 1000
    scores = np.full(n, 0.5, dtype=np.float32)
    scores[0], scores[1] = 0.05, 0.95
    table = np.full((n, 2), -1, dtype=np.int64)
    table[0, 0], table[1, 0] = 1, 0
    ids = [f"e{r}" for r in range(n)]
    got = top_hits(ids, with_neighbours(scores, table, 0.5), None, 2)
    assert [i for i, _ in got] == ["e1", "e0"]


def test_allowed_rows_through_an_index_equal_a_pass_over_every_id() -> None:
    rng = np.random.default_rng(11)
    ids = [f"e{n}" for n in range(400)]
    row_of = {i: n for n, i in enumerate(ids)}
    scores = rng.integers(0, 9, 400).astype(np.float32)
    for size in (0, 1, 7, 150, 399, 400):
        allowed = {ids[n] for n in rng.choice(400, size, replace=False)} | {"not-a-row"}
        assert list(allowed_rows(ids, allowed, row_of)) == list(allowed_rows(ids, allowed))
        assert top_hits(ids, scores, allowed, 25, row_of) == top_hits(ids, scores, allowed, 25)
