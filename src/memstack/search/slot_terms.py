"""The distinct terms of each slot of a BM25 index: what removing a document needs to undo its
document frequencies.

Slots added in this process keep a tuple each. Slots restored from a snapshot
(:meth:`memstack.search.Bm25Index.from_state`) keep nothing up front: building a tuple per slot
would cost a cold start most of its budget (``cold_start_s`` in bench/search_speed.py), and most
restored slots are never removed. On the first lookup of a restored slot the postings as restored
are inverted once (one stable sort), after which a lookup is a slice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["SlotTerms"]


class SlotTerms:
    """A list-like of ``tuple[str, ...]`` per slot, the first ``restored`` ones derived lazily."""

    __slots__ = ("_by_slot", "_restored", "_source", "_tail")

    def __init__(self, tail: list[tuple[str, ...]] | None = None) -> None:
        self._restored = 0
        self._source: tuple[Sequence[str], npt.NDArray[np.int64], npt.NDArray[np.int32]] | None = None
        self._by_slot: tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]] | None = None
        self._tail: list[tuple[str, ...]] = [] if tail is None else tail

    @classmethod
    def restored(
        cls, terms: Sequence[str], offsets: npt.NDArray[np.int64], slots: npt.NDArray[np.int32], count: int
    ) -> SlotTerms:
        """Slots ``0..count-1`` as postings say: term ``t`` is in ``slots[offsets[t]:offsets[t+1]]``."""
        made = cls()
        made._restored = count
        made._source = (terms, offsets, slots)
        return made

    def __len__(self) -> int:
        return self._restored + len(self._tail)

    def append(self, terms: tuple[str, ...]) -> None:
        self._tail.append(terms)

    def __getitem__(self, slot: int) -> tuple[str, ...]:
        if slot >= self._restored:
            return self._tail[slot - self._restored]
        if slot < 0:
            raise IndexError(slot)
        term_of, starts = self._invert()
        assert self._source is not None  # set whenever slots were restored
        names = self._source[0]
        return tuple(names[t] for t in term_of[starts[slot] : starts[slot + 1]].tolist())

    def _invert(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
        if self._by_slot is None:
            assert self._source is not None
            _, offsets, slots = self._source
            term_index = np.repeat(np.arange(len(offsets) - 1, dtype=np.int32), np.diff(offsets))
            order = np.argsort(slots, kind="stable")
            starts = np.zeros(self._restored + 1, dtype=np.int64)
            np.cumsum(np.bincount(slots, minlength=self._restored), out=starts[1:])
            self._by_slot = (term_index[order], starts)
        return self._by_slot
