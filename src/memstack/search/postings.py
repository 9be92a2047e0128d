"""Posting lists of the BM25 index: growable (slot, term frequency) arrays per term."""

from __future__ import annotations

from array import array

import numpy as np
import numpy.typing as npt

__all__ = ["Posting"]

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
