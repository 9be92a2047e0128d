"""The in-process index of one semantic cache: the vectors of its entries made by one model,
kept fresh from the engine by :class:`~memstack.shared.mirror.Mirror`."""

from __future__ import annotations

import json

from .mirror import Mirror
from .vectors import VectorIndex, decode_vector

__all__ = ["CacheMirror"]


class CacheMirror(Mirror):
    """The vectors of one cache's entries made by one model."""

    def __init__(self, model_id: str, dim: int) -> None:
        super().__init__()
        self.model_id = model_id
        self.index = VectorIndex(dim)

    def reset(self) -> None:
        self.index.clear()

    def apply(self, entry_id: str, raw: str | None) -> None:
        if raw is None:
            self.index.remove(entry_id)
            return
        entry = json.loads(raw)
        if entry.get("model") != self.model_id or entry.get("dim") != self.index.dim:
            self.index.remove(entry_id)  # another model's entry: never compared
            return
        self.index.add(entry_id, decode_vector(entry["vector"]))
