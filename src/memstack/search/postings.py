"""Posting lists of the BM25 index: growable (slot, term frequency) arrays per term."""

from __future__ import annotations

from array import array
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

__all__ = ["Posting", "live_postings"]

_I32 = npt.NDArray[np.int32]
assert array("i").itemsize == 4, "numpy views below read array('i') as int32"  # true on every CPython target


class Posting:
    """A growable list of (slot, term frequency) pairs for one term.

    ``array.array`` appends in C (cheap per added document); searches read them through zero-copy numpy
    views that live only inside a locked search.
    """

    __slots__ = ("df", "slots", "tfs")

    def __init__(self) -> None:
        self.slots = array("i")
        self.tfs = array("i")
        self.df = 0  # live documents containing the term

    def append(self, slot: int, tf: int) -> None:
        try:
            self.slots.append(slot)
            self.tfs.append(tf)
        except BufferError:
            # A numpy view from a search that raised is still alive somewhere: detach from it.
            self.slots, self.tfs = array("i", self.slots), array("i", self.tfs)
            del self.slots[len(self.tfs) :]
            self.slots.append(slot)
            self.tfs.append(tf)

    def views(self) -> tuple[_I32, _I32]:
        return np.frombuffer(self.slots, dtype=np.int32), np.frombuffer(self.tfs, dtype=np.int32)


def live_postings(
    postings: dict[str, Posting], live: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.int64], Iterator[tuple[str, _I32, _I32]]]:
    """``(live slots, postings renumbered)``: the slots ``live`` marks, in order, and per term still
    in a live document its ``(term, new slots, term frequencies)``, slots numbered as their place
    among the live ones (what compaction and export both need)."""
    kept = np.flatnonzero(live)
    new_of_old = np.full(len(live), -1, dtype=np.int32)
    new_of_old[kept] = np.arange(len(kept), dtype=np.int32)

    def renumbered() -> Iterator[tuple[str, _I32, _I32]]:
        for term, posting in postings.items():
            if posting.df == 0:
                continue
            slots, tfs = posting.views()
            alive = live[slots]
            yield term, new_of_old[slots[alive]], tfs[alive].copy()
            del slots, tfs  # the views pin the arrays' buffers

    return kept, renumbered()
