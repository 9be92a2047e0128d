"""``LabelTable``: the integer labels of a graph's ids, with no Python object per entry but the ids.

usearch names its vectors by 64-bit integers. A ``dict`` from id to label, its int objects and an
array back from label to id took about 80 bytes an entry at a million (the dict's table alone 42).
Here an id's label is a 63-bit digest of the id itself (:func:`digest`), so the id-to-label way
needs no table, and the label-to-id way is an open-addressing table in two numpy arrays (the label
and the id at each position, two-thirds full when laid out, three quarters at most): 16 bytes a
position, about 24 an entry. A graph's search turns its hundreds of labels into ids in a few
vectorised probes.

Two ids with one digest (about one chance in 10^7 for a million ids) or an id loaded from a graph
labelled otherwise keep their label in a small ``dict`` (``odd``); a new odd label is drawn from
2^63 up, where no digest falls. So a label never names two ids at once, and an id always finds its
own label.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["LabelTable", "digest"]

_EMPTY: Final = (1 << 64) - 1
_GONE: Final = (1 << 64) - 2  # a removed label: probing goes on past it
_SPREAD: Final = 0x9E3779B97F4A7C15  # Fibonacci hashing: labels given in sequence spread too
_ODD_FROM: Final = 1 << 63
_MASK64: Final = (1 << 64) - 1
Labels = npt.NDArray[np.uint64]


def digest(entry_id: str) -> int:
    """The label an id gets unless another id has it: 63 bits of its BLAKE2b digest."""
    raw = hashlib.blake2b(entry_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "little") >> 1


class LabelTable:
    """Labels by id and ids by label (not thread-safe: the owner locks)."""

    def __init__(self, size: int = 16) -> None:
        self._empty(size)
        self.odd: dict[str, int] = {}
        self._next_odd = _ODD_FROM

    def _empty(self, size: int) -> None:
        """No label, room for ``size`` of them (the table two-thirds full)."""
        self._size = max(16, size * 3 // 2 + 1)
        self._keys: Labels = np.full(self._size, _EMPTY, dtype=np.uint64)
        self._ids: npt.NDArray[np.object_] = np.full(self._size, None, dtype=object)
        self._used = 0  # positions holding a label or a removed one
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        """The two arrays and the odd labels' dict (its table and int objects; the ids are the
        caller's strings)."""
        odd = sys.getsizeof(self.odd) + 32 * len(self.odd)
        return int(self._keys.nbytes + self._ids.nbytes) + odd

    def copy(self) -> LabelTable:
        made = LabelTable.__new__(LabelTable)
        made._size, made._used, made._count = self._size, self._used, self._count
        made._keys, made._ids = self._keys.copy(), self._ids.copy()
        made.odd, made._next_odd = dict(self.odd), self._next_odd
        return made

    def _start(self, label: int) -> int:
        # the spread label's top 32 bits scaled to the table's size (no power of two needed)
        return ((((label * _SPREAD) & _MASK64) >> 32) * self._size) >> 32

    def _starts(self, labels: Labels) -> npt.NDArray[np.int64]:
        """:meth:`_start` of each of ``labels``."""
        spread = (labels * np.uint64(_SPREAD)) >> np.uint64(32)  # wraps as the scalar's mask does
        return ((spread * np.uint64(self._size)) >> np.uint64(32)).astype(np.int64)

    def _find(self, label: int) -> int:
        """The position of ``label``, or -1."""
        keys, size = self._keys, self._size
        at = self._start(label)
        while True:
            key = int(keys[at])
            if key == label:
                return at
            if key == _EMPTY:
                return -1
            at = at + 1 if at + 1 < size else 0

    def label(self, entry_id: str) -> int | None:
        """The label of ``entry_id``, or None when it is not held."""
        label = self.odd.get(entry_id)
        if label is None:
            label = digest(entry_id)
        at = self._find(label)
        return label if at >= 0 and self._ids[at] == entry_id else None

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and self.label(entry_id) is not None

    def add(self, entry_id: str, label: int | None = None) -> int:
        """Give ``entry_id`` (not held) ``label``, or its digest, or when another id has that, a new
        odd one; returns the label."""
        own = digest(entry_id)
        if label is None:
            label = own
        if label >= _GONE or self._find(label) >= 0:
            label = self._next_odd
        if label >= _ODD_FROM:
            self._next_odd = max(self._next_odd, label + 1)
        if label != own:
            self.odd[entry_id] = label
        if (self._used + 1) * 4 > len(self._keys) * 3:
            self._rebuild(self._count * 4 // 3 + 2)  # half full: a growing table rebuilds seldom
        self._place(label, entry_id)
        return label

    def fill(self, ids: list[str], labels: list[int] | None = None) -> list[int]:
        """:meth:`add` of every one of ``ids`` (distinct, none held), in vectorised rounds when the
        table is empty (a graph built or loaded: a million ids in about a second); the labels."""
        if self._count or self._used:
            return [self.add(i, None if labels is None else labels[n]) for n, i in enumerate(ids)]
        own = [digest(i) for i in ids]
        wanted = own if labels is None else labels
        if len(set(wanted)) < len(ids) or max(wanted, default=0) >= _GONE:  # digests that meet
            return [self.add(i, None if labels is None else labels[n]) for n, i in enumerate(ids)]
        self.odd = {i: label for i, label, mine in zip(ids, wanted, own, strict=True) if label != mine}
        self._next_odd = max([self._next_odd, *(v + 1 for v in self.odd.values() if v >= _ODD_FROM)])
        self._empty(len(ids))
        self._spread(np.array(wanted, dtype=np.uint64), np.array(ids, dtype=object))
        return list(wanted)

    def _spread(self, labels: Labels, ids: npt.NDArray[np.object_]) -> None:
        """Place distinct ``labels`` (none held) into an empty table with room, a round at a time:
        each free position takes the first label that wants it, the others probe on."""
        at = self._starts(labels)
        todo = np.arange(len(labels))
        while len(todo):
            free = todo[self._keys[at[todo]] == np.uint64(_EMPTY)]
            _, first = np.unique(at[free], return_index=True)
            won = free[first]
            self._keys[at[won]], self._ids[at[won]] = labels[won], ids[won]
            left = np.ones(len(labels), dtype=bool)
            left[won] = False
            todo = todo[left[todo]]
            at[todo] = (at[todo] + 1) % self._size
        self._used += len(labels)
        self._count += len(labels)

    def remove(self, entry_id: str) -> int | None:
        """Forget ``entry_id``; its label, or None when it was not held."""
        label = self.label(entry_id)
        if label is None:
            return None
        at = self._find(label)
        self._keys[at], self._ids[at] = _GONE, None
        self._count -= 1
        self.odd.pop(entry_id, None)
        return label

    def _rebuild(self, count: int) -> None:
        """Lay every label out again in a table two-thirds full for ``count`` of them."""
        held = (self._keys != _EMPTY) & (self._keys != _GONE)
        keys, ids = self._keys[held], self._ids[held]
        self._empty(count)
        self._spread(keys, ids)

    def _place(self, label: int, entry_id: str) -> None:
        """Put ``label`` (not held) at the first free position from its own (room made)."""
        at, size = self._start(label), self._size
        while (key := int(self._keys[at])) != _EMPTY and key != _GONE:
            at = at + 1 if at + 1 < size else 0
        self._used += key == _EMPTY
        self._keys[at], self._ids[at] = label, entry_id
        self._count += 1

    def ids_of(self, labels: npt.ArrayLike) -> npt.NDArray[np.object_]:
        """The id of each of ``labels`` (None where none has it), in a few vectorised probes."""
        wanted = np.asarray(labels, dtype=np.uint64).reshape(-1)
        out: npt.NDArray[np.object_] = np.full(len(wanted), None, dtype=object)
        at = self._starts(wanted)
        todo = np.arange(len(wanted))
        while len(todo):
            keys = self._keys[at[todo]]
            hit = keys == wanted[todo]
            out[todo[hit]] = self._ids[at[todo[hit]]]
            todo = todo[~hit & (keys != np.uint64(_EMPTY))]
            at[todo] = (at[todo] + 1) % self._size
        return out

    def share(self, ids: list[str]) -> None:
        """Hold the string objects of ``ids`` for those of them held (equal strings, one object)."""
        same = {entry_id: entry_id for entry_id in ids}
        self._ids[:] = [None if i is None else same.get(i, i) for i in self._ids.tolist()]
        self.odd = {same.get(i, i): label for i, label in self.odd.items()}

    def items(self) -> Iterator[tuple[str, int]]:
        """``(id, label)`` of every id held."""
        held = (self._keys != _EMPTY) & (self._keys != _GONE)
        return zip(self._ids[held].tolist(), self._keys[held].tolist(), strict=True)
