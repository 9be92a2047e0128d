"""BM25 scoring over the index's arrays (pure: no index state, no lock): the collection statistics,
the per-slot scores of a weighted query, and the best ``k`` slots.

:class:`~memstack.search.bm25.Bm25Index` keeps the arrays and calls these under its lock.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from memstack.search.postings import Posting

__all__ = ["collection_stats", "term_scores", "top_slots"]

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


def collection_stats(count: int, total_len: float, lengths: F64, mask: Mask | None) -> tuple[float, float]:
    """``(N, avgdl)``: over every live document (``count`` of them, ``total_len`` terms), or over
    the slots ``mask`` marks."""
    if mask is not None:
        count = int(np.count_nonzero(mask))
        total_len = float(lengths[: len(mask)][mask].sum())
    avgdl = total_len / count if count and total_len > 0 else 1.0
    return float(count), avgdl


def term_scores(
    terms: Mapping[str, float],
    postings: Mapping[str, Posting],
    lengths: F64,
    nslots: int,
    *,
    k1: float,
    b: float,
    stats: tuple[float, float],
    stat_mask: Mask | None,
) -> F64:
    """Σ weight·idf·tf per slot over ``terms``; df counted over ``stat_mask`` (None: every live slot)."""
    n_docs, avgdl = stats
    scores = np.zeros(nslots, dtype=np.float64)
    for term, weight in terms.items():
        posting = postings.get(term)
        if posting is None or posting.df == 0:
            continue
        slots, tfs = posting.views()
        if stat_mask is None:
            df = posting.df
        else:
            inside = stat_mask[slots]
            slots, tfs = slots[inside], tfs[inside]
            df = len(slots)
            if df == 0:
                continue
        idf = weight * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        norm = k1 * (1.0 - b + b * (lengths[slots] / avgdl))
        scores[slots] += (idf * (k1 + 1.0)) * tfs / (tfs + norm)
    return scores


def idf_mass(terms: Iterable[str], postings: Mapping[str, Posting], n_docs: float) -> float:
    """``Σ idf(t)`` over the distinct ``terms``, a term no document holds counting with ``df = 0``:
    the BM25 score of an average-length document holding each term once (``k1`` cancels there:
    ``(k1 + 1) · 1 / (1 + k1)``), what :mod:`memstack.search.evidence` divides by."""
    total = 0.0
    for term in set(terms):
        posting = postings.get(term)
        df = 0 if posting is None else posting.df
        total += math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    return total


def top_slots(
    scores: F64, seq: npt.NDArray[np.int64], ids: Sequence[str], k: int | None
) -> list[tuple[str, float]]:
    """``(id, score)`` of the best ``k`` positive scores (None: all), ties by insertion ``seq``."""
    hits = np.flatnonzero(scores > 0.0)
    if k is not None and len(hits) > k:
        part = scores[hits]
        cut = np.partition(part, len(part) - k)[len(part) - k]
        hits = hits[part >= cut]  # every tie at the cut survives; the order below picks among them
    order = np.lexsort((seq[hits], -scores[hits]))
    chosen = hits[order] if k is None else hits[order[:k]]
    # tolist(): Python ints and floats at once; indexing the arrays per hit cost ~0.1 ms a search
    return [(ids[s], score) for s, score in zip(chosen.tolist(), scores[chosen].tolist(), strict=True)]
