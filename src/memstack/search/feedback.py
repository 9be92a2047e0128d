"""Pseudo-relevance feedback: RM3 query expansion for BM25, Rocchio for query vectors.

Both assume the first results of a query are relevant and move the query towards them; both are
options of a :class:`~memstack.search.SearchProfile` (``rm3_*`` and ``rocchio_*``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memstack.foundation.errors import InvalidInput

__all__ = ["rm3_weights", "rocchio"]


def rm3_weights(
    query_terms: Sequence[str],
    feedback: Sequence[tuple[Sequence[str], float]],
    *,
    terms: int,
    query_weight: float,
) -> dict[str, float]:
    """The RM3 query: term -> weight, summing to 1.

    ``query_terms`` are the query's tokens; ``feedback`` holds ``(tokens of a document, its score)`` for
    the feedback documents. The relevance model is ``P(w|R) = Σ_d (s_d / Σs) · tf(w, d) / |d|`` (scores
    <= 0 and empty documents ignored), cut to its ``terms`` most likely terms (ties by first appearance)
    and renormalised; the result is ``query_weight · P(w|Q) + (1 - query_weight) · P(w|R)``. Without
    usable feedback the query's own distribution is returned.

    Raises:
        InvalidInput: ``terms`` < 0 or ``query_weight`` outside [0, 1].
    """
    if isinstance(terms, bool) or not isinstance(terms, int) or terms < 0:
        raise InvalidInput(f"terms={terms!r} must be an int >= 0")
    if not 0.0 <= query_weight <= 1.0:
        raise InvalidInput(f"query_weight={query_weight!r} must be within [0, 1]")
    query = Counter(query_terms)
    total_q = sum(query.values())
    p_query = {t: c / total_q for t, c in query.items()} if total_q else {}
    usable = [(toks, s) for toks, s in feedback if s > 0 and toks]
    mass = sum(s for _, s in usable)
    relevance: dict[str, float] = {}
    for toks, score in usable:
        share = score / mass / len(toks)
        for term, count in Counter(toks).items():
            relevance[term] = relevance.get(term, 0.0) + share * count
    if not relevance or terms == 0:
        return p_query
    kept = sorted(relevance.items(), key=lambda item: -item[1])[:terms]
    kept_mass = sum(p for _, p in kept)
    out = {t: query_weight * p for t, p in p_query.items()}
    for term, p in kept:
        out[term] = out.get(term, 0.0) + (1.0 - query_weight) * p / kept_mass
    if not p_query:  # nothing of the query itself survived tokenising: the feedback is all there is
        total = sum(out.values())
        out = {t: w / total for t, w in out.items()}
    return out


def rocchio(
    query: npt.NDArray[np.float32], feedback: npt.NDArray[np.float32], weight: float
) -> npt.NDArray[np.float32]:
    """``q + weight · mean(feedback rows)``, L2-normalised (``query`` unchanged without feedback rows).

    ``query`` is one vector, ``feedback`` a matrix of unit rows of the same width.

    Raises:
        InvalidInput: ``weight`` < 0, or the widths differ.
    """
    if not weight >= 0:
        raise InvalidInput(f"weight={weight!r} must be >= 0")
    if feedback.ndim != 2 or (feedback.shape[0] and feedback.shape[1] != query.shape[0]):
        raise InvalidInput(
            f"feedback of shape {feedback.shape} does not match a query of width {query.shape[0]}"
        )
    norm = float(np.linalg.norm(query))
    if feedback.shape[0] == 0 or norm == 0.0:
        return query
    moved = query.astype(np.float32) / norm + np.float32(weight) * feedback.mean(axis=0, dtype=np.float32)
    length = float(np.linalg.norm(moved))
    return query if length == 0.0 else (moved / length).astype(np.float32)
