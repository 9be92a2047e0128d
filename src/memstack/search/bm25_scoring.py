"""BM25 scoring over the index's arrays (pure: no index state, no lock): the collection statistics,
the per-slot scores of a weighted query, and the best ``k`` slots.

:class:`~memstack.search.bm25.Bm25Index` keeps the arrays and calls these under its lock.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from memstack.search.postings import Postings, TFs

__all__ = [
    "ScoreArgs",
    "candidate_mask",
    "collection_stats",
    "sparse_term_scores",
    "term_scores",
    "top_hits",
    "top_slots",
]

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
Slots = npt.NDArray[np.intp]
_SORT_IN_PYTHON = 64
_DENSE_SHARE = 16  # a query with more postings than 1/_DENSE_SHARE of the slots is scored densely


class ScoreArgs(TypedDict):
    """The keywords :func:`term_scores` and :func:`sparse_term_scores` share: ``live`` marks the
    live slots when some are dead (their pairs stay until compaction, so a term's document
    frequency counts the live ones), None when every slot is live."""

    k1: float
    b: float
    stats: tuple[float, float]
    stat_mask: Mask | None
    live: Mask | None


def candidate_mask(
    candidates: Collection[str] | Mask | None,
    nslots: int,
    live: Mask,
    dead: int,
    slot_of: Mapping[str, int],
) -> Mask | None:
    """The slots a search may return: ``candidates`` (ids, or a mask made while the index had its
    current slots) that are live; None when that is every slot (no candidates, nothing removed)."""
    if isinstance(candidates, np.ndarray):
        mask = np.zeros(nslots, dtype=bool)
        size = min(nslots, len(candidates))
        mask[:size] = candidates[:size]
        if dead:
            mask &= live[:nslots]
        return mask
    if candidates is not None:
        mask = np.zeros(nslots, dtype=bool)
        mask[[s for s in map(slot_of.get, candidates) if s is not None]] = True
        return mask
    return live[:nslots] if dead else None


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
    postings: Postings,
    lengths: F64,
    nslots: int,
    *,
    k1: float,
    b: float,
    stats: tuple[float, float],
    stat_mask: Mask | None,
    live: Mask | None,
) -> F64:
    """Σ weight·idf·tf per slot over ``terms``; df counted over ``stat_mask`` (None: every live slot).
    Term by term over an array of every slot: what a query of common terms (postings in most
    slots) costs least with; :func:`sparse_term_scores` adds up in the same order."""
    n_docs, avgdl = stats
    scores = np.zeros(nslots, dtype=np.float64)
    for term, weight in terms.items():
        found = postings.block(term)
        if found is None:
            continue
        start, end = found[0], found[0] + found[1]
        slots, tfs = postings.slots[start:end], postings.tfs[start:end]
        if stat_mask is None:
            df = found[1] if live is None else int(np.count_nonzero(live[slots]))
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


def sparse_term_scores(
    terms: Mapping[str, float],
    postings: Postings,
    lengths: F64,
    scratch: F64,
    *,
    k1: float,
    b: float,
    stats: tuple[float, float],
    stat_mask: Mask | None,
    live: Mask | None,
) -> tuple[Slots, F64]:
    """What :func:`term_scores` computes, for the slots the query's postings hold only: ``(slots
    ascending, their scores)``, dead slots possibly among them (the caller drops them). A query
    touches a few hundred postings of a corpus of many thousand slots, so nothing here walks every
    slot: ``scratch`` (zeros, one per slot, left zeros again) sums the contributions in the same
    order as the dense sum, so the scores are bit for bit the same. Terms whose postings fill a good
    share of the slots go the dense way (:func:`term_scores`)."""
    blocks = [
        (weight, found) for term, weight in terms.items() if (found := postings.block(term)) is not None
    ]
    if sum(count for _, (_, count) in blocks) * _DENSE_SHARE > len(scratch):
        scores = term_scores(
            terms, postings, lengths, len(scratch), k1=k1, b=b, stats=stats, stat_mask=stat_mask, live=live
        )
        hits = np.flatnonzero(scores > 0.0)
        return hits, scores[hits]
    slots, contributions, parts = _contributions(blocks, postings, lengths, k1, b, stats, stat_mask, live)
    if parts < 2:  # one posting list holds each slot once, in ascending order
        return slots, contributions
    try:
        np.add.at(scratch, slots, contributions)
        hits = _distinct(slots)
        values = scratch[hits]
    finally:
        scratch[slots] = 0.0
    return hits, values


def _distinct(slots: Slots) -> Slots:
    """The distinct ``slots``, ascending (``np.unique`` costs ~10x more on a few hundred)."""
    joined = np.sort(slots)
    first = np.empty(len(joined), dtype=bool)
    first[0] = True
    np.not_equal(joined[1:], joined[:-1], out=first[1:])
    return joined[first]


def _contributions(
    blocks: list[tuple[float, tuple[int, int]]],
    postings: Postings,
    lengths: F64,
    k1: float,
    b: float,
    stats: tuple[float, float],
    stat_mask: Mask | None,
    live: Mask | None,
) -> tuple[Slots, F64, int]:
    """``(slots, weight·idf·tf, terms)``: every posting of the query's terms (``(weight, (start,
    count))`` of each, in query order) that documents hold, term after term (so adding them up in
    that order is the per-term sum), and how many terms contributed. The postings are joined first,
    so the arithmetic below is one pass of a few array operations whatever the number of terms (per
    term it cost ~10 numpy calls). A term whose pairs are all dead contributes to dead slots only."""
    n_docs, avgdl = stats
    slot_parts: list[npt.NDArray[np.int32]] = []
    tf_parts: list[TFs] = []
    weights: list[float] = []
    counts: list[int] = []
    for weight, (start, count) in blocks:
        stored, tfs = postings.slots[start : start + count], postings.tfs[start : start + count]
        if stat_mask is not None:
            inside = stat_mask[stored]
            stored, tfs = stored[inside], tfs[inside]
            count = len(stored)
            if count == 0:
                continue
        slot_parts.append(stored)
        tf_parts.append(tfs)
        weights.append(weight)
        counts.append(count)
    if not counts:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64), 0
    # int32 indexes cost a conversion each: one conversion here
    slots = (np.concatenate(slot_parts) if len(slot_parts) > 1 else slot_parts[0]).astype(np.intp)
    tfs_f = (np.concatenate(tf_parts) if len(tf_parts) > 1 else tf_parts[0]).astype(np.float64)
    dfs = counts
    if stat_mask is None and live is not None:
        bounds = np.zeros(len(counts), dtype=np.intp)
        np.cumsum(counts[:-1], out=bounds[1:])
        dfs = np.add.reduceat(live[slots], bounds, dtype=np.int64).tolist()
    coefs = [
        w * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)) * (k1 + 1.0)
        for w, df in zip(weights, dfs, strict=True)
    ]
    coef = np.repeat(np.array(coefs, dtype=np.float64), counts) if len(coefs) > 1 else coefs[0]
    norm = k1 * (1.0 - b + b * (lengths[slots] / avgdl))
    return slots, coef * tfs_f / (tfs_f + norm), len(coefs)


def idf_mass(terms: Iterable[str], postings: Postings, n_docs: float, live: Mask | None) -> float:
    """``Σ idf(t)`` over the distinct ``terms``, a term no document holds counting with ``df = 0``:
    the BM25 score of an average-length document holding each term once (``k1`` cancels there:
    ``(k1 + 1) · 1 / (1 + k1)``), what :mod:`memstack.search.evidence` divides by."""
    total = 0.0
    # Distinct terms in first-seen order, never a set's: a float sum's last digit depends on its
    # order, and a set's order on the process's string hash seed (two servers would disagree).
    for term in dict.fromkeys(terms):
        df = postings.df(term, live)
        total += math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    return total


def top_slots(
    scores: F64, seq: npt.NDArray[np.int64], ids: Sequence[str], k: int | None
) -> list[tuple[str, float]]:
    """``(id, score)`` of the best ``k`` positive scores (None: all), ties by insertion ``seq``."""
    hits = np.flatnonzero(scores > 0.0)
    return top_hits(hits, scores[hits], seq, ids, k)


def top_hits(
    hits: Slots, values: F64, seq: npt.NDArray[np.int64], ids: Sequence[str], k: int | None
) -> list[tuple[str, float]]:
    """:func:`top_slots` over the slots ``hits`` with scores ``values`` (other slots score 0)."""
    n = len(values)
    if k is not None and n > k:
        cut = np.partition(values, n - k)[n - k]
        # every tie at the cut survives (the order below picks among them); no zero score does
        keep = values >= cut if cut > 0.0 else values > 0.0
        hits, values = hits[keep], values[keep]
    elif n and not values.min() > 0.0:
        keep = values > 0.0
        hits, values = hits[keep], values[keep]
    if len(hits) <= _SORT_IN_PYTHON:
        # a few rows: sorting Python tuples beats the numpy calls of a lexsort
        rows = sorted(zip((-values).tolist(), seq[hits].tolist(), hits.tolist(), strict=True))[:k]
        return [(ids[s], -negated) for negated, _, s in rows]
    order = np.lexsort((seq[hits], -values))
    if k is not None:
        order = order[:k]
    # tolist(): Python ints and floats at once (indexing the arrays per hit cost ~0.1 ms a search);
    # itemgetter and zip build the pairs in C (a comprehension took ~0.14 µs a hit)
    chosen = hits[order].tolist()
    if len(chosen) < 2:  # itemgetter of one index returns the item, not a tuple
        return [(ids[s], score) for s, score in zip(chosen, values[order].tolist(), strict=True)]
    return list(zip(itemgetter(*chosen)(ids), values[order].tolist(), strict=True))
