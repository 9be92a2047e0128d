"""RockBot's phrase bonus: consecutive query-token pairs matched as substrings of the raw text.

Pure functions, used by the ``rockbot`` BM25 profile: phrase df and frequency are
case-insensitive, non-overlapping substring counts in the raw text, not token matches, so ``rock music``
also matches inside ``brock music`` (a documented quirk of the original, kept for identical rankings).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["add_phrase_scores", "phrase_counts", "query_phrases"]


def query_phrases(tokens: Sequence[str]) -> list[str]:
    """Distinct consecutive pairs ``"t_i t_i+1"`` of a filtered token list, in first-seen order."""
    return list(dict.fromkeys(f"{a} {b}" for a, b in itertools.pairwise(tokens)))


def phrase_counts(lowered: Sequence[str], slots: Iterable[int], phrase: str) -> list[tuple[int, int]]:
    """``(slot, count)`` for every slot whose lower-cased text contains ``phrase`` (non-overlapping count).

    ``phrase`` must already be lower-case (query tokens of RockBot's tokeniser are).
    """
    found = []
    for slot in slots:
        text = lowered[slot]
        if phrase in text:
            found.append((slot, text.count(phrase)))
    return found


def add_phrase_scores(
    scores: npt.NDArray[np.float64],
    lowered: Sequence[str],
    pool: Sequence[int],
    phrases: Sequence[str],
    doc_len: npt.NDArray[np.float64],
    *,
    n_docs: float,
    avgdl: float,
    k1: float,
    b: float,
    weight: float,
) -> None:
    """Add ``weight·idf·tf`` of every phrase to ``scores[slot]`` for the slots of ``pool`` holding it.

    df is the number of pool texts containing the phrase, f its non-overlapping count in one text, and
    idf/tf are the BM25 shapes of the term part (with the document's token count as its length).
    """
    for phrase in phrases:
        found = phrase_counts(lowered, pool, phrase)
        if not found:
            continue
        df = len(found)
        idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        for slot, f in found:
            tf = f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * float(doc_len[slot]) / avgdl))
            scores[slot] += weight * idf * tf
