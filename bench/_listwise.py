"""A listwise logistic regression over candidate lists, in NumPy: how the turns' second stage is fitted.

Each question contributes its candidates (one feature row each) and which of them are evidence. The
model scores a candidate ``s = w · z`` (``z``: the features standardised over every candidate), and a
question's candidates compete in a softmax; the loss is, summed over the questions with at least one
evidence candidate, the cross-entropy between that softmax and the evidence spread evenly over the
question's evidence candidates, plus ``l2 / 2 · |w|²``.

Two ways to minimise it. :func:`fit` runs Newton's method to convergence (the loss is convex; the
Hessian is ``features × features``, 11 × 11 for the stage), so its result depends on the data and
``l2`` only. :func:`descend` runs a fixed number of gradient steps of a fixed size: it is how the
committed table was made, kept so that table can be made again. Its step is too long for the
steepest direction of the stage's loss (the step times the Hessian's largest eigenvalue per question
is 2.02 at the optimum, over the 2 under which gradient descent converges), so it does not converge:
it settles into a cycle of two points, and an even number of steps lands on one of them.

:func:`table` writes a fit in the form of :data:`memstack.search.turn_rerank.WEIGHTS`: the weights in
the features' own units, divided by the score's weight (so the score counts 1), and the features'
means. Used by ``bench/fit_turn_rerank.py``; nothing here knows LoCoMo or memstack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["DESCENT_RATE", "DESCENT_STEPS", "ITERATIONS", "L2", "TOLERANCE", "Fit", "NotConverged",
           "descend", "fit", "largest_difference", "loss", "table", "table_text"]  # fmt: skip

Floats = npt.NDArray[np.float64]
Labels = npt.NDArray[np.bool_]
Table = Mapping[str, tuple[float, float]]

L2: Final = 1.0
"""The L2 penalty on the standardised weights, against a loss summed over questions (about 460 on the
tune part): one question's worth, as the committed table was fitted. It keeps the optimum unique when
features move together (the score, its session's best and its neighbours' best are correlated);
on the stage's converged fit, 0, 0.5 or 2 instead move a weight by 0.041 at most and the tune
R@1 / R@5 / R@10 / R@20 by 0.002 at most."""

ITERATIONS: Final = 50
"""Newton steps at most. The loss is convex and smooth, so Newton's method (with its step halved
until the loss falls enough) converges quadratically: the stage's fit stops after 7 to 9 steps;
reaching this cap means the problem is degenerate, and :func:`fit` raises instead of returning a
half-fitted table."""

STEP_TOLERANCE: Final = 1e-10
"""The fit has converged when the largest change of a standardised weight in one step is below this."""

DESCENT_STEPS: Final = 1500
"""The gradient steps of :func:`descend`: those the committed table was made with. The cycle is
reached after a few hundred steps (500, 1500 and 5000 steps give the same table to 0.0001); the count
must stay even, for an odd count lands on the cycle's other point (1499 or 1501 steps: a table whose
``vector_part`` weight is 0.65 away)."""

DESCENT_RATE: Final = 0.5
"""The step of :func:`descend`, on the mean gradient per question: the committed table's."""

DECIMALS: Final = 4
"""The table is written with this many decimals, as :data:`memstack.search.turn_rerank.WEIGHTS` is."""

TOLERANCE: Final = 0.01
"""The largest difference between two tables (any weight or mean) under which they are the same fit:
well above the rounding (0.00005) and the floating-point noise of refitting the same heads, below
the differences that fits on other heads or by the other method show (0.11 and more)."""


class NotConverged(ArithmeticError):
    """A Newton fit did not converge within its steps."""


@dataclass(frozen=True)
class Fit:
    """A fitted model: ``weights`` on the standardised features, and the means and spreads used."""

    weights: Floats
    means: Floats
    spreads: Floats
    questions: int  # the questions that counted (at least one evidence candidate)
    steps: int

    @property
    def raw(self) -> Floats:
        """The weights in the features' own units (a constant per question dropped: it moves no order)."""
        out: Floats = self.weights / self.spreads
        return out


def _padded(rows: Sequence[Floats], labels: Sequence[Labels]) -> tuple[Floats, Floats, Floats]:
    """Candidates as ``(questions, longest, features)``, a mask of the real ones, and the target
    distribution (evidence spread evenly), for the questions with evidence."""
    kept = [(x, y) for x, y in zip(rows, labels, strict=True) if y.any()]
    width = max((len(y) for _, y in kept), default=0)
    n_features = rows[0].shape[1] if rows else 0
    x_out = np.zeros((len(kept), width, n_features))
    mask = np.zeros((len(kept), width))
    target = np.zeros((len(kept), width))
    for q, (x, y) in enumerate(kept):
        x_out[q, : len(y)] = x
        mask[q, : len(y)] = 1.0
        target[q, : len(y)] = y / y.sum()
    return x_out, mask, target


def _softmax(scores: Floats, mask: Floats) -> tuple[Floats, Floats]:
    """Each question's softmax over its candidates, and its log-normaliser."""
    shifted = np.where(mask > 0, scores, -np.inf)
    top = shifted.max(axis=1, keepdims=True)
    e = np.exp(shifted - top) * mask
    total = e.sum(axis=1, keepdims=True)
    return e / total, (top + np.log(total))[:, 0]


def _loss(w: Floats, x: Floats, mask: Floats, target: Floats, l2: float) -> float:
    """The summed cross-entropy plus the penalty (the question's log-normaliser minus its evidence's
    mean score: no logarithm of a vanishing probability)."""
    scores = x @ w
    _, normaliser = _softmax(scores, mask)
    return float((normaliser - (target * scores).sum(axis=1)).sum() + l2 / 2 * w @ w)


def _problem(
    rows: Sequence[Floats], labels: Sequence[Labels]
) -> tuple[Floats, Floats, tuple[Floats, Floats, Floats]]:
    """The means and spreads over every candidate of every question, and the padded problem."""
    every = np.vstack(rows)
    means, spreads = every.mean(axis=0), every.std(axis=0)
    spreads = np.where(spreads > 0, spreads, 1.0)  # a constant feature: its weight stays 0 under l2
    padded = _padded([(r - means) / spreads for r in rows], labels)
    if not len(padded[0]):
        raise ValueError("no question has an evidence candidate: nothing to fit")
    return means, spreads, padded


def _gradient(w: Floats, x: Floats, mask: Floats, target: Floats, l2: float) -> tuple[Floats, Floats]:
    """The loss's gradient at ``w``, and each candidate's softmax probability."""
    p, _ = _softmax(x @ w, mask)
    return np.einsum("qn,qnf->f", p - target, x) + l2 * w, p


def fit(
    rows: Sequence[Floats], labels: Sequence[Labels], *, l2: float = L2, iterations: int = ITERATIONS
) -> Fit:
    """The converged fit on ``rows[q]`` (one ``(candidates, features)`` matrix per question) and
    ``labels[q]`` (True for an evidence candidate). The means and spreads are over every candidate of
    every question; questions without an evidence candidate only count there.

    Raises:
        NotConverged: no convergence within ``iterations`` Newton steps.
        ValueError: no question has an evidence candidate.
    """
    means, spreads, (x, mask, target) = _problem(rows, labels)
    w = np.zeros(x.shape[2])
    for step in range(1, iterations + 1):
        gradient, p = _gradient(w, x, mask, target, l2)
        mean_z = np.einsum("qn,qnf->qf", p, x)
        hessian = np.einsum("qn,qnf,qng->fg", p, x, x) - mean_z.T @ mean_z + l2 * np.eye(len(w))
        move = np.linalg.solve(hessian, gradient)
        # a full Newton step overshoots from far away (the softmax saturates): halve it until the
        # loss falls by at least half of what the gradient promises (Armijo's rule)
        now, slope, size = _loss(w, x, mask, target, l2), float(gradient @ move), 1.0
        while _loss(w - size * move, x, mask, target, l2) > now - size * slope / 2 and size > 1e-12:
            size /= 2
        w = w - size * move
        if np.abs(size * move).max() < STEP_TOLERANCE:
            return Fit(w, means, spreads, len(x), step)
    raise NotConverged(f"the listwise fit did not converge in {iterations} Newton steps")


def descend(
    rows: Sequence[Floats],
    labels: Sequence[Labels],
    *,
    l2: float = L2,
    steps: int = DESCENT_STEPS,
    rate: float = DESCENT_RATE,
) -> Fit:
    """``steps`` gradient steps from zero on the same problem as :func:`fit`, each ``rate`` times the
    gradient divided by the number of questions (see the module docstring: not a converged fit).

    Raises:
        ValueError: no question has an evidence candidate.
    """
    means, spreads, (x, mask, target) = _problem(rows, labels)
    w = np.zeros(x.shape[2])
    for _ in range(steps):
        gradient, _ = _gradient(w, x, mask, target, l2)
        w = w - rate * gradient / len(x)
    return Fit(w, means, spreads, len(x), steps)


def loss(result: Fit, rows: Sequence[Floats], labels: Sequence[Labels]) -> float:
    """The fit's mean cross-entropy per question with evidence (without the penalty)."""
    x, mask, target = _padded([(r - result.means) / result.spreads for r in rows], labels)
    return _loss(result.weights, x, mask, target, 0.0) / max(1, len(x))


def table(result: Fit, names: Sequence[str], score: str) -> dict[str, tuple[float, float]]:
    """``{name: (weight, mean)}`` with the weight of ``score`` made 1, rounded to :data:`DECIMALS`.

    Raises:
        ValueError: the fitted weight of ``score`` is not positive (the table keeps the score's own
            scale only when the score counts for the evidence).
    """
    raw = result.raw
    unit = raw[list(names).index(score)]
    if not unit > 0:
        raise ValueError(f"the fitted weight of {score!r} is {unit:.4g}, not positive: no table")
    return {
        name: (round(float(raw[n] / unit), DECIMALS) + 0.0, round(float(result.means[n]), DECIMALS) + 0.0)
        for n, name in enumerate(names)
    }


def table_text(weights: Table, title: str = "WEIGHTS") -> str:
    """``weights`` as the Python source of :data:`memstack.search.turn_rerank.WEIGHTS`."""
    lines = [
        f"{title}: Final[dict[str, tuple[float, float]]] = {{",
        "    # feature: (weight, mean on the tune part)",
    ]
    lines += [f'    "{name}": ({w!r}, {m!r}),' for name, (w, m) in weights.items()]
    return "\n".join([*lines, "}"])


def largest_difference(one: Table, other: Table) -> dict[str, tuple[float, str]]:
    """The largest absolute difference between two tables of the same features, of a weight and of a
    mean, each with the feature it is on."""
    out = {}
    for part, label in ((0, "weight"), (1, "mean")):
        found = [(abs(one[name][part] - other[name][part]), name) for name in one]
        out[label] = max(found, default=(0.0, ""))
    return out
