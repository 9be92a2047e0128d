"""The listwise fit behind ``bench/fit_turn_rerank.py`` (``bench/_listwise.py``), on made-up problems."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Final

import numpy as np
import numpy.typing as npt
import pytest


def _load() -> ModuleType:
    """``bench/_listwise.py`` as a module (bench/ is a folder of scripts, not a package)."""
    path = Path(__file__).resolve().parents[2] / "bench" / "_listwise.py"
    spec = importlib.util.spec_from_file_location("_listwise", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


listwise = _load()

Problem = tuple[list[npt.NDArray[np.float64]], list[npt.NDArray[np.bool_]]]


def problem(questions: int = 200, candidates: int = 8, seed: int = 7) -> Problem:
    """One evidence candidate per question; feature 0 is higher on it (with noise), features 1 and 2
    are noise."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for _ in range(questions):
        y = np.zeros(candidates, dtype=np.bool_)
        y[rng.integers(candidates)] = True
        x = rng.normal(size=(candidates, 3))
        x[:, 0] = 2.0 * y + rng.normal(scale=0.5, size=candidates)
        rows.append(x)
        labels.append(y)
    return rows, labels


def test_the_feature_that_separates_the_evidence_gets_the_weight() -> None:
    rows, labels = problem()
    fitted = listwise.fit(rows, labels)
    assert fitted.questions == len(rows)
    assert fitted.weights[0] > 2.0
    assert np.abs(fitted.weights[1:]).max() < 0.1 * fitted.weights[0]
    # the flipped problem flips the sign: the fit reads the labels, not the column order
    flipped = listwise.fit([-x for x in rows], labels)
    assert flipped.weights[0] < -2.0


def test_gradient_steps_reach_the_newton_optimum_where_they_converge() -> None:
    rows, labels = problem(questions=60)
    newton = listwise.fit(rows, labels)
    # a step far under 2 / the curvature converges: both minimise the same loss
    steps = listwise.descend(rows, labels, steps=3000, rate=0.5)
    assert np.abs(steps.weights - newton.weights).max() < 1e-3
    assert listwise.loss(newton, rows, labels) <= listwise.loss(steps, rows, labels) + 1e-9
    few = listwise.descend(rows, labels, steps=3)
    assert listwise.loss(few, rows, labels) > listwise.loss(newton, rows, labels) + 0.01


def test_questions_without_evidence_count_in_the_means_only() -> None:
    rows, labels = problem(questions=40)
    empty = [np.full((8, 3), 100.0)]
    with_empty = listwise.fit(rows + empty, [*labels, np.zeros(8, dtype=np.bool_)])
    assert with_empty.questions == 40
    assert with_empty.means[0] > listwise.fit(rows, labels).means[0] + 1.0
    with pytest.raises(ValueError, match="no question has an evidence candidate"):
        listwise.fit(empty, [np.zeros(8, dtype=np.bool_)])


def test_a_fit_that_does_not_converge_raises() -> None:
    rows, labels = problem(questions=40)
    with pytest.raises(listwise.NotConverged):
        listwise.fit(rows, labels, iterations=1)


def test_the_table_counts_the_score_once_in_the_features_own_units() -> None:
    rows, labels = problem()
    scaled = [x * np.array([10.0, 1.0, 1.0]) for x in rows]  # feature 0 in other units
    names = ("score", "noise", "other")
    table = listwise.table(listwise.fit(scaled, labels), names, "score")
    assert table["score"][0] == 1.0
    assert abs(table["score"][1] - float(np.vstack(scaled)[:, 0].mean())) < 1e-4
    plain = listwise.table(listwise.fit(rows, labels), names, "score")
    # the noise weights are relative to the score's: in the score's units 10 times larger
    assert table["noise"][0] == pytest.approx(10 * plain["noise"][0], abs=2e-3)
    with pytest.raises(ValueError, match="not positive"):  # the evidence has the lower scores
        listwise.table(listwise.fit([-x for x in rows], labels), names, "score")


def test_the_table_text_is_the_python_of_the_table() -> None:
    table = listwise.table(listwise.fit(*problem()), ("score", "noise", "other"), "score")
    text = listwise.table_text(table)
    found: dict[str, object] = {"Final": Final}
    exec(text, found)
    assert found["WEIGHTS"] == table
    assert text.splitlines()[0] == "WEIGHTS: Final[dict[str, tuple[float, float]]] = {"


def test_the_largest_difference_names_its_feature() -> None:
    one = {"a": (1.0, 2.0), "b": (0.5, 0.0)}
    other = {"a": (1.0, 2.25), "b": (0.375, 0.0)}
    assert listwise.largest_difference(one, other) == {"weight": (0.125, "b"), "mean": (0.25, "a")}
    assert listwise.largest_difference(one, one)["weight"][0] == 0.0
