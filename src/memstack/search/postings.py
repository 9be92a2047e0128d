"""Posting lists of a BM25 index, flat: every term's (slot, term frequency) pairs in two shared arrays
(slots int32, frequencies uint16), each term's pairs one contiguous block of them.

Why flat: an object per term (a list and its arrays) is what Python's garbage collector walks on
every full collection. A process caching thousands of small scopes held about a million of them, and
each full collection then paused every thread for tens of milliseconds. Here an index holds the same
handful of objects whatever its size: numpy arrays (which the collector does not track), their
memoryviews (fast scalar access from Python) and a ``dict`` of ``str -> int`` (untracked too).

Layout: term id ``t`` (dense, in first-seen order: :attr:`Postings.ids` maps a term to it,
:attr:`Postings.names` back) owns rows ``start[t] .. start[t] + count[t]`` of :attr:`Postings.slots`
and :attr:`Postings.tfs`, room for ``cap[t]``. Appending to a full block moves it to the end of the used
rows with half as much room again, the old rows becoming garbage; once garbage passes a quarter of
the rows the blocks hold, the arrays are packed again (one vectorised gather), so appends stay
amortised O(1) and the rows within about 1.6 times the pairs. Pairs are never changed: a removed
document's pairs stay (the index marks its slot dead) until the index compacts its slots
(:meth:`Postings.live_csr`).

Frequencies are 16 bits: a term rarely comes back more than a few times in one text, and 2 bytes a
pair instead of 4 is about 45 of the 285 bytes an entry of a 200,000-entry index (16 pairs an
entry). A text that repeats a term more than 65,535 times widens the array to int32 for good, so no
frequency is ever cut; scores are the same either way (read as float64).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["Postings", "TFs", "int_bytes"]

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
TFs = npt.NDArray[np.uint16] | npt.NDArray[np.int32]
_START, _COUNT, _CAP = 0, 1, 2  # the columns of the per-term table
_STR_BYTES = 49  # an ASCII str object's header (a term's characters are added to it)
_PACK_FROM = 1024  # rows below which garbage is left alone (packing costs more than it saves)
_DOUBLE_BELOW = 1 << 16  # rows below which the arrays double (a small index grows in a few steps)
_NARROW_MAX = 0xFFFF  # the largest frequency the 16-bit array holds


class Postings:
    """The posting lists of one index (not thread-safe: the index's lock guards it)."""

    __slots__ = (
        "_meta",
        "_mm",
        "_ms",
        "_mt",
        "chars",
        "held",
        "ids",
        "names",
        "pairs",
        "slots",
        "tfs",
        "used",
    )

    def __init__(self, rows: int = 16, terms: int = 16) -> None:
        self.ids: dict[str, int] = {}
        self.names: list[str] = []
        self.slots: I32 = np.zeros(max(rows, 1), dtype=np.int32)
        self.tfs: TFs = np.zeros(max(rows, 1), dtype=np.uint16)
        self._meta: I64 = np.zeros((max(terms, 1), 3), dtype=np.int64)
        self._views()
        self.used = 0  # rows handed to blocks (garbage included)
        self.held = 0  # rows the live blocks hold (their room)
        self.pairs = 0
        self.chars = 0  # bytes of the term strings

    def _views(self) -> None:
        self._ms = self.slots.data
        self._mt = self.tfs.data
        self._mm = self._meta.reshape(-1).data

    def __len__(self) -> int:
        return len(self.names)

    def add(self, slot: int, counts: Mapping[str, int]) -> None:
        """Append ``(slot, tf)`` to the block of each term of ``counts`` (new terms get one)."""
        ids, mm = self.ids, self._mm
        for term, tf in counts.items():
            t = ids.get(term)
            if t is None:
                t = self._new_term(term)
                mm = self._mm
            at = 3 * t
            count = mm[at + _COUNT]
            if count == mm[at + _CAP]:
                self._move(t, count)
                mm = self._mm
            row = mm[at] + count
            self._ms[row] = slot
            if tf > _NARROW_MAX and self.tfs.dtype != np.int32:
                self._widen()
            self._mt[row] = tf
            mm[at + _COUNT] = count + 1
        self.pairs += len(counts)

    def _new_term(self, term: str) -> int:
        """The id of a new term, its empty block of room for two pairs at the end of the used rows."""
        t = len(self.names)
        if t == len(self._meta):
            meta = np.zeros((2 * t, 3), dtype=np.int64)
            meta[:t] = self._meta
            self._meta = meta
            self._views()
        if self.used + 2 > len(self.slots):
            self._grow(self.used + 2)
        self.names.append(term)
        self.ids[term] = t
        self.chars += _STR_BYTES + len(term)
        at, mm = 3 * t, self._mm
        mm[at], mm[at + _COUNT], mm[at + _CAP] = self.used, 0, 2
        self.used += 2
        self.held += 2
        return t

    def _move(self, t: int, count: int) -> None:
        """Give term ``t``'s full block half as much room again at the end of the used rows (after
        packing, when garbage has piled up: the block may have room then)."""
        at = 3 * t
        room = self._mm[at + _CAP] * 3 // 2 + 2
        garbage = self.used - self.held
        full = self.used + room > len(self.slots)
        # pack rather than grow the arrays when a good share is garbage
        if garbage > max(self.held >> (3 if full else 2), _PACK_FROM):
            self._pack()
        start, cap = self._mm[at], self._mm[at + _CAP]
        if count < cap:
            return
        room = cap * 3 // 2 + 2
        if self.used + room > len(self.slots):
            self._grow(self.used + room)
        end = self.used
        self.slots[end : end + count] = self.slots[start : start + count]
        self.tfs[end : end + count] = self.tfs[start : start + count]
        self._mm[at], self._mm[at + _CAP] = end, room
        self.used += room
        self.held += room - cap

    def _widen(self) -> None:
        """Hold frequencies as int32 from now on (one came past 16 bits)."""
        self.tfs = self.tfs.astype(np.int32)
        self._views()

    def _grow(self, need: int) -> None:
        size = len(self.slots)
        size = max(need, size * 2 if size < _DOUBLE_BELOW else size + (size >> 2))
        for name in ("slots", "tfs"):
            old = getattr(self, name)
            new = np.zeros(size, dtype=old.dtype)
            new[: self.used] = old[: self.used]
            setattr(self, name, new)
        self._views()

    def _rows(self) -> tuple[I64, I64]:
        """``(rows, counts)``: the row of every pair, block after block in term order, and each
        term's count."""
        meta = self._meta[: len(self.names)]
        return _spread(meta[:, _START], meta[:, _COUNT]), meta[:, _COUNT]

    def pack(self) -> None:
        """Drop the garbage and every block's room (an index built in one go, or just snapshotted:
        about 40 bytes an entry of a 100,000-entry index built entry by entry). The next append to
        a block moves it to the end with room again, so appends stay amortised O(1)."""
        self._pack(room=False)

    def _pack(self, room: bool = True) -> None:
        """Drop the garbage: every block again, in term order, with a quarter more room than it
        holds (so that the next appends do not move every block at once), or none (``room``
        False)."""
        rows, counts = self._rows()
        caps = counts + (counts >> 2) if room else counts.copy()
        starts = np.zeros(len(caps), dtype=np.int64)
        np.cumsum(caps[:-1], out=starts[1:])
        held = int(caps.sum())
        size = held + (held >> 3) + 16 if room else max(held, 1)
        slots, tfs = np.zeros(size, dtype=np.int32), np.zeros(size, dtype=self.tfs.dtype)
        target = _spread(starts, counts)
        slots[target], tfs[target] = self.slots[rows], self.tfs[rows]
        self.slots, self.tfs = slots, tfs
        self._meta[: len(caps), _START] = starts
        self._meta[: len(caps), _CAP] = caps
        self.used = self.held = held
        self._views()

    # -- reading -------------------------------------------------------------------------------
    def block(self, term: str) -> tuple[int, int] | None:
        """``(start, count)`` of ``term``'s rows, or None when no document ever held it."""
        t = self.ids.get(term)
        if t is None:
            return None
        at = 3 * t
        return self._mm[at], self._mm[at + _COUNT]

    def df(self, term: str, live: npt.NDArray[np.bool_] | None) -> int:
        """Documents holding ``term``: its pairs, or those whose slot ``live`` marks."""
        found = self.block(term)
        if found is None:
            return 0
        start, count = found
        if live is None:
            return count
        return int(np.count_nonzero(live[self.slots[start : start + count]]))

    def nbytes(self) -> int:
        """Bytes held: the arrays (their spare rows too), the per-term table, dict and names."""
        arrays = self.slots.nbytes + self.tfs.nbytes + self._meta.nbytes
        ids = sys.getsizeof(self.ids) + int_bytes(len(self.names))  # the dict's table, its int values
        return arrays + sys.getsizeof(self.names) + self.chars + ids

    # -- whole-index conversions -----------------------------------------------------------------
    def live_csr(self, live: npt.NDArray[np.bool_]) -> tuple[I64, list[str], I64, I32, I32]:
        """``(live slots, terms, offsets, slots, tfs)``: the slots ``live`` marks, in order, and the
        postings of the terms some live slot holds as CSR (term ``i`` owns ``slots[offsets[i]:
        offsets[i + 1]]``, ascending), slots renumbered as their place among the live ones."""
        kept = np.flatnonzero(live)
        new_of_old = np.full(len(live), -1, dtype=np.int32)
        new_of_old[kept] = np.arange(len(kept), dtype=np.int32)
        rows, counts = self._rows()
        old = self.slots[rows]
        alive = live[old]
        owner = np.repeat(np.arange(len(counts)), counts)[alive]
        per_term = np.bincount(owner, minlength=len(counts))
        present = np.flatnonzero(per_term)
        offsets = np.zeros(len(present) + 1, dtype=np.int64)
        np.cumsum(per_term[present], out=offsets[1:])
        names = self.names
        terms = [names[t] for t in present.tolist()]
        return kept, terms, offsets, new_of_old[old[alive]], self.tfs[rows][alive].astype(np.int32)

    @classmethod
    def from_csr(cls, terms: Sequence[str], offsets: I64, slots: I32, tfs: I32) -> Postings:
        """Postings whose term ``i`` holds ``slots/tfs[offsets[i]:offsets[i + 1]]`` (checked by the
        caller), each block with no spare room (a restored index is mostly searched)."""
        made = cls(rows=len(slots), terms=len(terms))
        if len(tfs) and int(tfs.max()) > _NARROW_MAX:
            made._widen()
        made.slots[: len(slots)] = slots
        made.tfs[: len(tfs)] = tfs
        counts = np.diff(offsets)
        made._meta[: len(terms), _START] = offsets[:-1]
        made._meta[: len(terms), _COUNT] = counts
        made._meta[: len(terms), _CAP] = counts
        made.names = list(terms)
        made.ids = dict(zip(made.names, range(len(terms)), strict=True))
        made.used = made.held = made.pairs = len(slots)
        made.chars = sum(map(len, made.names)) + _STR_BYTES * len(made.names)
        return made


def int_bytes(count: int) -> int:
    """The bytes of the int objects ``0 .. count - 1`` (CPython shares those below 257)."""
    return 32 * max(0, count - 257)


def _spread(starts: I64, counts: I64) -> I64:
    """``starts[t] + i`` for ``i < counts[t]``, term after term: the rows of blocks laid end to end."""
    ends = np.cumsum(counts)
    total = int(ends[-1]) if len(ends) else 0
    return np.repeat(starts - (ends - counts), counts) + np.arange(total, dtype=np.int64)
