"""``VectorIndex``: unit vectors by id in one growable matrix, searched by cosine similarity.

Adding or removing an id costs one row copy (a removed row is filled with the last one), so an
index kept fresh entry by entry never rebuilds its matrix; a search is one matrix-vector product
over the live rows (single-threaded) and a partial sort for the best ``k``. Cosine similarity is 0 for a zero
vector (nothing to compare), as in RobotLab's memory store.
"""

from __future__ import annotations

import base64
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["Vector", "VectorIndex", "decode_vector", "encode_vector", "unit"]

Vector = npt.NDArray[np.float32]
_ROUNDING: Final = 1e-6


def unit(vector: npt.ArrayLike) -> Vector:
    """``vector`` as float32 scaled to length 1 (a zero vector stays zero)."""
    out = np.array(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(out))
    if norm > 0:
        out /= norm
    return out


def encode_vector(vector: Vector) -> str:
    """Base64 of the float32 bytes (the stored form)."""
    return base64.b64encode(np.ascontiguousarray(vector, dtype=np.float32).tobytes()).decode()


def decode_vector(text: str) -> Vector:
    """The inverse of :func:`encode_vector`."""
    return np.frombuffer(base64.b64decode(text), dtype=np.float32)


class VectorIndex:
    """Vectors of dimension ``dim`` by id (not thread-safe: the owner locks)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._matrix: Vector = np.zeros((16, dim), dtype=np.float32)
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._rows

    def add(self, entry_id: str, vector: npt.ArrayLike) -> bool:
        """Store ``vector`` (normalised) under ``entry_id``; False (nothing stored) for another dimension."""
        row = unit(vector)
        if row.shape[0] != self.dim:
            return False
        index = self._rows.get(entry_id)
        if index is None:
            index = len(self._ids)
            if index == self._matrix.shape[0]:
                grown = np.zeros((2 * index, self.dim), dtype=np.float32)
                grown[:index] = self._matrix
                self._matrix = grown
            self._ids.append(entry_id)
            self._rows[entry_id] = index
        self._matrix[index] = row
        return True

    def remove(self, entry_id: str) -> bool:
        """Drop ``entry_id``; True if it was there."""
        index = self._rows.pop(entry_id, None)
        if index is None:
            return False
        last = len(self._ids) - 1
        if index != last:
            moved = self._ids[last]
            self._matrix[index] = self._matrix[last]
            self._ids[index] = moved
            self._rows[moved] = index
        self._ids.pop()
        return True

    def clear(self) -> None:
        """Drop every vector."""
        self._matrix = np.zeros((16, self.dim), dtype=np.float32)
        self._ids = []
        self._rows = {}

    def top(
        self, vector: npt.ArrayLike, k: int | None = None, least: float = -1.0
    ) -> list[tuple[str, float]]:
        """``(id, similarity)`` of the best ``k`` ids (None: all) with similarity >= ``least``,
        best first (ties: lower row first)."""
        query = unit(vector)
        n = len(self._ids)
        if n == 0 or query.shape[0] != self.dim or not query.any():
            return []
        # einsum, not matmul: BLAS would wake its thread pool per call, which costs
        # milliseconds on a busy machine, far more than the product itself.
        sims = np.clip(np.einsum("ij,j->i", self._matrix[:n], query), -1.0, 1.0)
        if k is not None and k < n:
            part = np.argpartition(-sims, k - 1)[:k] if k > 0 else np.zeros(0, dtype=np.intp)
            order = part[np.lexsort((part, -sims[part]))]
        else:
            order = np.lexsort((np.arange(n), -sims))
        # float32 rounding must not turn an identical vector (similarity 1) into a miss at 1.0
        floor = least - _ROUNDING
        return [(self._ids[i], float(sims[i])) for i in order if sims[i] >= floor]
