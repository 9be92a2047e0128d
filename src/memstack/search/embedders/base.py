"""The embedder protocol every embedding backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "embed_queries", "l2_normalise", "start_loading"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors.

    ``model_id`` names the model (a change of model must be detectable from it); ``dim`` is the vector
    size; ``embed`` returns a float32 array of shape ``(len(texts), dim)`` with L2-normalised rows (a text
    with nothing to embed may give an all-zero row).
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


def l2_normalise(vectors: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length (all-zero rows stay zero), as float32."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Embed search queries: an embedder whose model wants queries marked (E5's ``query:`` prefix)
    has an ``embed_queries`` method, used here; any other embeds queries like entries.

    Raises:
        Exception: whatever the embedder raises.
    """
    method = getattr(embedder, "embed_queries", None)
    out: npt.NDArray[np.float32] = method(texts) if callable(method) else embedder.embed(texts)
    return out


def start_loading(embedder: Embedder) -> None:
    """Have an embedder whose model loads lazily (a ``start_loading`` method: the local models) begin
    loading it in the background now, so the first save's vector and the first search's query vector do
    not wait for it; any other embedder is left as it is."""
    method = getattr(embedder, "start_loading", None)
    if callable(method):
        method()
