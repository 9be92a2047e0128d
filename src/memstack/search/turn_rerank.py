"""A second ranking stage for conversation turns: a linear model over what the search already knows.

A search over conversation turns (with vectors) fuses BM25 and cosine, then spreads the fused scores
along the conversation (:mod:`memstack.search.propagation`). That first order leaves evidence that
the fused score alone does not see: a turn that only asks something ("Did you go?") or says little
("Thanks!") rarely holds the fact asked about; a turn whose neighbour is close to the question in
meaning is often its answer; a hit low in a list and alone in its session is weaker than its score.
This stage re-scores the :data:`DEPTH` best turns with

``score' = score + Σ weight_f · (f − mean_f)``

over the features :data:`FEATURES` (the fused ``score`` itself has weight 1, so ``score'`` stays on
the fused score's scale and an average candidate keeps its score). No model is loaded: the weights
are a table made by ``bench/fit_turn_rerank.py``, a listwise logistic regression (a softmax over each
question's candidates) on the tune part of LoCoMo (conv-26, conv-41, conv-43), with ``mean_f`` the
features' means there; ``python bench/fit_turn_rerank.py --check`` makes it again and compares.
Nothing in it knows a data set: it reads a turn's words, its question mark, its session and
neighbours, and the scores of the search. Figures in docs/recall.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["DEPTH", "FEATURES", "MISSING_Z", "SESSION_TOP", "WEIGHTS", "TurnHead", "features", "rescored"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

DEPTH: Final = 50
"""How many of the first fused turns are re-scored (the rest keep their order after them)."""

SESSION_TOP: Final = 20
"""The session features count and take the best score among the first this many candidates."""

MISSING_Z: Final = -3.0
"""The cosine z-score of a neighbour that is not there (the edge of a session)."""

FEATURES: Final = (
    "log_words",  # ln(1 + words of the turn)
    "question",  # 1 when the turn ends with a question mark
    "score",  # the fused, propagated score
    "bm25_part",  # the BM25 term of the fused score
    "vector_part",  # the vector term of the fused score
    "session_best",  # the best score among the first SESSION_TOP candidates of the turn's session
    "session_hits",  # how many of the first SESSION_TOP candidates are in the turn's session
    "log_rank",  # ln(1 + rank) in the fused order, 0 for the first
    "neighbour_score",  # the best score among the turn's neighbours that are candidates (0: none)
    "z",  # the turn's cosine in standard deviations over the scope's cosines
    "neighbour_z",  # the best z of the turn's neighbours in its session (MISSING_Z: none)
)

WEIGHTS: Final[dict[str, tuple[float, float]]] = {
    # feature: (weight, mean on the tune part)
    "log_words": (0.5315, 3.2873),
    "question": (-0.299, 0.2529),
    "score": (1.0, 0.7917),
    "bm25_part": (-0.2454, 0.1575),
    "vector_part": (-2.3443, 0.0249),
    "session_best": (-0.0717, 0.9462),
    "session_hits": (0.0092, 4.0879),
    "log_rank": (-0.3139, 2.9696),
    "neighbour_score": (0.0395, 0.345),
    "z": (0.3024, 1.011),
    "neighbour_z": (0.0294, 0.6793),
}


@dataclass(frozen=True, slots=True)
class TurnHead:
    """The first candidates of one search, in fused order (all arrays of one length ``n``).

    ``sessions``: a session number per turn (-1: none, then the turn is a session of its own);
    ``neighbours``: ``(n, k)`` positions in this head of each turn's neighbours in its session (-1:
    not a candidate); ``neighbour_z``: the best cosine z-score among those neighbours, candidates or
    not (:data:`MISSING_Z` when the turn has none)."""

    words: Ints
    questions: npt.NDArray[np.bool_]
    scores: Floats
    bm25_parts: Floats
    vector_parts: Floats
    sessions: Ints
    neighbours: Ints
    z: Floats
    neighbour_z: Floats


def _sessions(head: TurnHead) -> tuple[Floats, Floats]:
    """Per turn, the best score and the count among the first :data:`SESSION_TOP` of its session."""
    n = len(head.scores)
    keys = np.where(head.sessions >= 0, head.sessions, -1 - np.arange(n))  # no session: its own
    top = min(n, SESSION_TOP)
    same = keys[:, None] == keys[None, :top]
    best = np.where(same, head.scores[None, :top], 0.0).max(axis=1, initial=0.0)
    return np.maximum(best, 0.0), same.sum(axis=1).astype(np.float64)


def features(head: TurnHead) -> Floats:
    """The ``(n, len(FEATURES))`` feature matrix of ``head``."""
    n = len(head.scores)
    best, hits = _sessions(head)
    padded = np.append(head.scores, 0.0)  # position -1 reads this 0
    near = padded[head.neighbours].max(axis=1, initial=0.0) if head.neighbours.size else np.zeros(n)
    columns = (
        np.log1p(head.words.astype(np.float64)),
        head.questions.astype(np.float64),
        head.scores,
        head.bm25_parts,
        head.vector_parts,
        best,
        hits,
        np.log1p(np.arange(n, dtype=np.float64)),
        np.maximum(near, 0.0),
        head.z,
        head.neighbour_z,
    )
    return np.stack(columns, axis=1) if n else np.zeros((0, len(FEATURES)))


def rescored(head: TurnHead, table: Mapping[str, tuple[float, float]] = WEIGHTS) -> Floats:
    """``score'`` of every turn of ``head`` (the module docstring's sum) under ``table`` (a table in
    the form of :data:`WEIGHTS`; a search uses :data:`WEIGHTS` itself)."""
    weight = np.array([table[f][0] for f in FEATURES])
    mean = np.array([table[f][1] for f in FEATURES])
    adjusted: Floats = (features(head) - mean) @ weight + mean[FEATURES.index("score")]
    return adjusted
