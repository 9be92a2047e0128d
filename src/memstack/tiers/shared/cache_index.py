"""The in-process index of one semantic cache: the vectors of its entries made by one model, kept
fresh from the engine by the index kit's :class:`~memstack.index.mirror.Mirror`."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ...index.codec import Matrix, unpack
from ...index.mirror import Mirror, Row
from ...index.vectors import VectorIndex

__all__ = ["CacheMirror"]


class CacheMirror(Mirror):
    """The vectors of one cache's entries made by one model."""

    def __init__(self, model_id: str, dim: int) -> None:
        super().__init__()
        self.model_id = model_id
        self.index = VectorIndex(dim)

    def reset(self) -> None:
        self.index.clear()

    def take(self, rows: Sequence[Row]) -> None:
        for entry_id, raw, _ in rows:
            vector = None if raw is None else self._vector(raw)
            if vector is None:
                self.index.remove(entry_id)  # gone, or another model's entry: never compared
            else:
                self.index.add(entry_id, vector)
        self.size = len(self.index)

    def _vector(self, raw: str) -> Matrix | None:
        entry = json.loads(raw)
        if entry.get("model") != self.model_id or entry.get("dim") != self.index.dim:
            return None
        return unpack(entry["vector"], self.index.dim)

    def vector_bytes(self) -> int:
        return self.index.nbytes
