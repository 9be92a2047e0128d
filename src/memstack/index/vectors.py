"""``VectorIndex``: unit vectors by id in one growable matrix, searched by cosine similarity.

An id holds one vector or several (a LangGraph item embeds each of its fields: its similarity is
its best vector's, LangGraph's pooling). The vectors are the *columns* of a ``(dim, capacity)``
matrix: ``query @ matrix`` over that layout measured about twice as fast as ``rows @ query``
(100,000 x 384: ~7 ms against ~15-25 ms on a shared 2-core machine), and long-term memory's hybrid
search reads the live columns as they are (:meth:`VectorIndex.columns`). Adding or removing a
vector costs one column copy (a removed column is filled with the last one), so an index kept fresh
entry by entry never rebuilds its matrix. A search is one product over the live columns and a
partial sort for the best ``k``; below :data:`BLAS_FROM` columns it is an ``einsum`` (BLAS would
wake its thread pool per call, which costs milliseconds on a busy machine, more than a small
product). Cosine similarity is 0 for a zero vector (nothing to compare), as in RobotLab's memory store.

:meth:`VectorIndex.quantise` replaces the float matrix by rows of 4 or 8 bits a component
(:mod:`memstack.index.quantise`), each with its own float scale (196 or 388 bytes a 384-dimensional
vector instead of 1,536), for a scope whose searches go through an approximate graph and only
re-score its candidates (:meth:`VectorIndex.gather`). Each vector's own scale (its largest
component maps to the top level) keeps the cosine within about 0.001 at 8 bits and 0.005 at 4: on
clustered 384-dimensional vectors the top 10 re-scored from 300 exact candidates kept 0.98 of the
exact ones at 8 bits, against 0.885 for one scale for every vector (the graph library's own 8-bit
copy multiplies each unit vector by 127, so a component of about 0.05 gets some 13 levels). The
quantised rows are row-major, so a candidate's codes are one contiguous run.
"""

from __future__ import annotations

import sys
from typing import Final

import numpy as np
import numpy.typing as npt

from . import quantise as q
from .codec import Matrix, unit_rows

__all__ = ["VectorIndex"]

_ROUNDING: Final = 1e-6
BLAS_FROM: Final = 4096
_BLOCK: Final = 32_768
"""Columns from which a search's product goes to BLAS (``np.dot``) rather than ``einsum``."""
Scores = npt.NDArray[np.float32]


class VectorIndex:
    """Vectors of dimension ``dim`` by id (not thread-safe: the owner locks)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.clear()

    def clear(self) -> None:
        """Drop every vector."""
        self._matrix: Matrix = np.zeros((self.dim, 16), dtype=np.float32)  # one column per vector
        self._owner = np.zeros(16, dtype=np.int32)  # row -> slot of its id
        self._nrows = 0
        self._ids: list[str] = []  # slot -> id
        self._slot: dict[str, int] = {}
        # slot -> its first row; every row of the few ids holding several. A list per id cost about
        # 170 bytes an entry (its dict slot, the list, two int objects): 170 MB at a million.
        self._first = np.zeros(16, dtype=np.int32)
        self._more: dict[int, list[int]] = {}
        self._multi = 0  # ids holding more than one row
        self._sum: npt.NDArray[np.float64] | None = None  # see moments(): kept once asked for
        self._outer: npt.NDArray[np.float64] | None = None
        self._pending: tuple[list[Matrix], list[Matrix], int] = ([], [], 0)  # columns to fold in
        self._codes: q.Codes | None = None  # quantised: a row of codes per vector (quantise())
        self._scale: Matrix = np.zeros(0, dtype=np.float32)  # and each row's scale
        self._bits = 0

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._slot

    @property
    def nbytes(self) -> int:
        """Bytes held: the matrix (and its column scales once quantised), the row and slot arrays, the
        id list, the id dict's table and its slot numbers (int objects; the ids are the caller's
        strings) and the rows of ids holding several."""
        arrays = self._matrix.nbytes + self._owner.nbytes + self._first.nbytes
        scales = self._scale.nbytes + (0 if self._codes is None else self._codes.nbytes)
        ids = sys.getsizeof(self._ids) + sys.getsizeof(self._slot) + 32 * len(self._slot)
        more = sys.getsizeof(self._more) + sum(88 + 40 * len(rows) for rows in self._more.values())
        return int(arrays + scales) + ids + more

    @property
    def quantised(self) -> int:
        """Bits a component the vectors are held in once quantised (0: float32)."""
        return self._bits

    def quantise(self, bits: int = 8) -> None:
        """Hold every vector, now and later, as ``bits`` (4 or 8) a component with one scale per
        vector. The moments (:meth:`moments`) are taken from the float vectors first and later ones
        are added as given, so they stay the float figures; a vector removed afterwards is taken
        out as held (its quantisation error, about 0.005 a cosine at 4 bits, stays in them)."""
        if bits not in q.WIDTHS:
            raise ValueError(f"quantise: {bits} bits a component, not one of {q.WIDTHS}")
        if self._codes is None:
            self.moments()
            floats = self._matrix
            self._codes = q.empty(floats.shape[1], self.dim, bits)
            self._scale = np.zeros(floats.shape[1], dtype=np.float32)
            self._bits = bits
            self._matrix = np.zeros((self.dim, 0), dtype=np.float32)
            for start in range(0, self._nrows, _BLOCK):
                stop = min(self._nrows, start + _BLOCK)
                self._put(start, floats[:, start:stop])

    def _put(self, start: int, columns: Matrix) -> None:
        """Store ``columns`` (float) at ``start`` and on (room reserved)."""
        stop = start + columns.shape[1]
        if self._codes is None:
            self._matrix[:, start:stop] = columns
            return
        codes, scale = q.encode(np.ascontiguousarray(columns.T), self._bits)
        self._codes[start:stop], self._scale[start:stop] = codes, scale

    def _rows(self, slot: int) -> list[int]:
        """The rows of the id in ``slot``, its first first."""
        more = self._more.get(slot)
        return [int(self._first[slot])] if more is None else more

    def _floats(self, rows: slice | list[int] | npt.NDArray[np.int64]) -> Matrix:
        """The columns ``rows`` (an index or slice of rows) as float32, dequantised if need be."""
        if self._codes is None:
            picked: Matrix = self._matrix[:, rows]
            return picked
        return q.decode(self._codes[rows], self._scale[rows], self.dim, self._bits).T

    def add(self, entry_id: str, vectors: npt.ArrayLike) -> bool:
        """Store ``vectors`` (one vector or rows, normalised) under ``entry_id``, replacing its
        rows; False (nothing stored, the old rows kept) for another dimension or no row."""
        rows = unit_rows(vectors)
        if rows.shape[1] != self.dim or not len(rows):
            return False
        self.remove(entry_id)
        slot = len(self._ids)
        self._ids.append(entry_id)
        self._slot[entry_id] = slot
        need = self._nrows + len(rows)
        self._reserve(need, slot + 1)
        self._put(self._nrows, rows.T)
        self._owner[self._nrows : need] = slot
        self._first[slot] = self._nrows
        if len(rows) > 1:
            self._more[slot] = list(range(self._nrows, need))
        self._nrows = need
        self._multi += len(rows) > 1
        self._moved(rows.T, 1.0)  # as given (the float vector, also when quantised)
        return True

    def extend(self, ids: list[str], vectors: npt.ArrayLike) -> None:
        """Add one vector (a row of ``vectors``, normalised) per id, none of them held yet: a
        whole index built in one copy.

        Raises:
            ValueError: a row count or dimension that does not match, or an id already held.
        """
        rows = unit_rows(vectors) if len(ids) else np.zeros((0, self.dim), dtype=np.float32)
        if (
            rows.shape != (len(ids), self.dim)
            or any(i in self._slot for i in ids)
            or len(set(ids)) < len(ids)
        ):
            raise ValueError(f"extend: {len(ids)} new ids for vectors of shape {rows.shape}, dim {self.dim}")
        start, need = self._nrows, self._nrows + len(ids)
        first = len(self._ids)
        self._reserve(need, first + len(ids))
        self._put(start, rows.T)
        self._owner[start:need] = np.arange(first, first + len(ids), dtype=np.int32)
        self._first[first : first + len(ids)] = np.arange(start, need, dtype=np.int32)
        self._slot.update(zip(ids, range(first, first + len(ids)), strict=True))
        self._ids.extend(ids)
        self._nrows = need
        self._moved(rows.T, 1.0)

    def _reserve(self, need: int, slots: int) -> None:
        """Room for ``need`` rows and ``slots`` ids."""
        if slots > len(self._first):
            first = np.zeros(max(slots, 2 * len(self._first)), dtype=np.int32)
            first[: len(self._first)] = self._first
            self._first = first
        room = len(self._owner)
        if need > room:
            size, n = max(need, 2 * room), self._nrows
            if self._codes is None:
                grown = np.zeros((self.dim, size), dtype=np.float32)
                grown[:, :n] = self._matrix[:, :n]
                self._matrix = grown
            else:
                codes, scale = q.empty(size, self.dim, self._bits), np.zeros(size, dtype=np.float32)
                codes[:n], scale[:n] = self._codes[:n], self._scale[:n]
                self._codes, self._scale = codes, scale
            owner = np.zeros(size, dtype=np.int32)
            owner[:n] = self._owner[:n]
            self._owner = owner

    def remove(self, entry_id: str) -> bool:
        """Drop ``entry_id``; True if it was there."""
        slot = self._slot.pop(entry_id, None)
        if slot is None:
            return False
        rows = self._more.pop(slot, None) or [int(self._first[slot])]
        self._multi -= len(rows) > 1
        self._moved(self._floats(rows), -1.0)
        for row in sorted(rows, reverse=True):  # highest first: a moved row is never one of these
            self._move_last_to(row)
        last = len(self._ids) - 1
        if slot != last:  # the last slot's id takes the freed slot
            moved = self._ids[last]
            self._ids[slot] = moved
            self._slot[moved] = slot
            self._first[slot] = self._first[last]
            moved_rows = self._more.pop(last, None)
            if moved_rows is not None:
                self._more[slot] = moved_rows
            self._owner[self._rows(slot)] = slot
        self._ids.pop()
        return True

    def _move_last_to(self, row: int) -> None:
        last = self._nrows - 1
        if row != last:
            if self._codes is None:
                self._matrix[:, row] = self._matrix[:, last]
            else:
                self._codes[row], self._scale[row] = self._codes[last], self._scale[last]
            owner = int(self._owner[last])
            self._owner[row] = owner
            rows = self._more.get(owner)
            if rows is not None:
                rows[rows.index(last)] = row
            if self._first[owner] == last:
                self._first[owner] = row
        self._nrows = last

    def moments(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int]:
        """``(sum of the columns, sum of their outer products, column count)``: the mean and spread
        of every column's cosine with a unit ``q`` are ``q @ sum / n`` and from ``q @ outer @ q / n``,
        at a cost of ``dim**2`` whatever ``n``. Computed on first call (one pass over the matrix),
        then kept up to date: the columns added or removed since are folded in here, in one product
        each, rather than as an outer product per change."""
        if self._sum is None or self._outer is None:
            total = np.zeros(self.dim, dtype=np.float64)
            outer = np.zeros((self.dim, self.dim), dtype=np.float64)
            for start in range(0, self._nrows, _BLOCK):  # float32 products, summed in float64
                part = self._floats(slice(start, min(self._nrows, start + _BLOCK)))
                total += part.sum(axis=1, dtype=np.float64)
                outer += part @ part.T
            self._sum, self._outer, self._pending = total, outer, ([], [], 0)
        self._fold()
        return self._sum, self._outer, self._nrows

    def _moved(self, columns: Matrix, sign: float) -> None:
        """Note ``columns`` added (``sign`` 1) or removed (-1) for :meth:`moments`, once asked for."""
        if self._sum is None or not columns.shape[1]:
            return
        added, removed, count = self._pending
        (added if sign > 0 else removed).append(np.array(columns, dtype=np.float32))
        self._pending = added, removed, count + columns.shape[1]
        if self._pending[2] > max(4096, self._nrows // 4):  # bounded: fold now
            self._fold()

    def _fold(self) -> None:
        added, removed, _ = self._pending
        if self._sum is None or self._outer is None or not (added or removed):
            return
        for parts, sign in ((added, 1.0), (removed, -1.0)):
            if parts:
                block = np.hstack(parts)
                self._sum += sign * block.sum(axis=1, dtype=np.float64)
                self._outer += sign * (block @ block.T)
        self._pending = [], [], 0

    def similarities(self, vector: npt.ArrayLike) -> tuple[list[str], Scores]:
        """``(ids, similarity of each)``: every id's best row's cosine with ``vector`` (clipped to
        [-1, 1]); nothing for a zero vector or another dimension."""
        query = unit_rows(vector)[0]
        n = self._nrows
        if n == 0 or query.shape[0] != self.dim or not query.any():
            return [], np.zeros(0, dtype=np.float32)
        if self._codes is not None:  # block by block: never a float copy of every column
            blocks = (self._floats(slice(s, min(n, s + _BLOCK))) for s in range(0, n, _BLOCK))
            product = np.concatenate([np.dot(query, block) for block in blocks])
        elif n >= BLAS_FROM:
            product = np.dot(query, self._matrix[:, :n])
        else:
            product = np.einsum("j,ji->i", query, self._matrix[:, :n])
        sims: Scores = np.clip(product, -1.0, 1.0)
        if not self._multi:  # one row per id, slot order is row order
            order = self._owner[:n]
            best = np.empty(len(self._ids), dtype=np.float32)
            best[order] = sims
            return list(self._ids), best
        best = np.full(len(self._ids), -np.inf, dtype=np.float32)
        np.maximum.at(best, self._owner[:n], sims)
        return list(self._ids), best

    def ids(self) -> list[str]:
        """The id of each column of :meth:`columns`, in order."""
        ids = self._ids
        return [ids[slot] for slot in self._owner[: self._nrows].tolist()]

    def rows_of(self, ids: list[str]) -> npt.NDArray[np.int64]:
        """The first column of each of ``ids`` (every one held) in :meth:`columns`, in order."""
        slot = self._slot
        slots = np.fromiter((slot[i] for i in ids), dtype=np.int64, count=len(ids))
        return self._first[slots].astype(np.int64)

    def gather(self, ids: list[str]) -> Matrix:
        """The first vector of each of ``ids`` (every one held) as the columns of a new matrix."""
        return np.array(self._floats(self.rows_of(ids)), dtype=np.float32)

    def columns(self) -> Matrix:
        """The live vectors as a ``(dim, n)`` view, one column per vector (read it under the
        owner's lock, before the index changes again); a quantised index gives a float copy (a
        search through a graph reads :meth:`gather` instead)."""
        view: Matrix = self._floats(slice(0, self._nrows))
        return view

    def top(
        self, vector: npt.ArrayLike, k: int | None = None, least: float = -1.0
    ) -> list[tuple[str, float]]:
        """``(id, similarity)`` of the best ``k`` ids (None: all) with similarity >= ``least``,
        best first (ties: the id added first... among those still held, by slot)."""
        ids, sims = self.similarities(vector)
        n = len(ids)
        if n == 0:
            return []
        if k is not None and k < n:
            part = np.argpartition(-sims, k - 1)[:k] if k > 0 else np.zeros(0, dtype=np.intp)
            order = part[np.lexsort((part, -sims[part]))]
        else:
            order = np.lexsort((np.arange(n), -sims))
        # float32 rounding must not turn an identical vector (similarity 1) into a miss at 1.0
        floor = least - _ROUNDING
        return [(ids[i], float(sims[i])) for i in order.tolist() if sims[i] >= floor]
