"""The seed's phrase bonus: consecutive query-token pairs matched as substrings of the raw text.

Pure functions, used by the ``rockbot`` BM25 profile (spec items 18-20, 22): phrase df and frequency are
case-insensitive, non-overlapping substring counts in the raw text, not token matches, so ``rock music``
also matches inside ``brock music`` (a documented quirk of the original, kept for identical rankings).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

__all__ = ["phrase_counts", "query_phrases"]


def query_phrases(tokens: Sequence[str]) -> list[str]:
    """Distinct consecutive pairs ``"t_i t_i+1"`` of a filtered token list, in first-seen order."""
    return list(dict.fromkeys(f"{a} {b}" for a, b in itertools.pairwise(tokens)))


def phrase_counts(lowered: Sequence[str], slots: Iterable[int], phrase: str) -> list[tuple[int, int]]:
    """``(slot, count)`` for every slot whose lower-cased text contains ``phrase`` (non-overlapping count).

    ``phrase`` must already be lower-case (query tokens of the seed's tokeniser are).
    """
    found = []
    for slot in slots:
        text = lowered[slot]
        if phrase in text:
            found.append((slot, text.count(phrase)))
    return found
