"""The one stored form of vectors: little-endian float32 rows, base64, in a small JSON payload.

``{"d": dim, "v": base64 rows}``, plus ``"m"`` (the model id) and ``"h"`` (a digest of the text
the vector was computed from) when the writer records them. Long-term memory stores one row per
entry with ``m`` and ``h`` (a vector is used only for the text and model it was made from); the
LangGraph store one row per embedded field of an item; the semantic cache and the document store
keep the bare base64 (:func:`pack`) inside their entries, beside their own model fields.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Matrix", "StoredVectors", "decode", "encode", "pack", "unit_rows", "unpack"]

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class StoredVectors:
    """A decoded payload: ``rows`` is ``(n, dim)``; ``model`` and ``text_hash`` may be empty."""

    model: str
    dim: int
    text_hash: str
    rows: Matrix

    @property
    def vector(self) -> Matrix:
        """The first row (a payload of one vector)."""
        row: Matrix = self.rows[0]
        return row


def pack(rows: npt.ArrayLike) -> str:
    """Base64 of the float32 little-endian bytes of ``rows`` (a vector or a matrix)."""
    data = np.ascontiguousarray(rows, dtype="<f4")
    return base64.b64encode(data.tobytes()).decode("ascii")


def unpack(text: str, dim: int | None = None) -> Matrix | None:
    """The rows in ``text`` (``(n, dim)``; one row of every value when ``dim`` is None), or None
    when it is not whole rows of float32."""
    try:
        flat = np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4").astype(np.float32)
    except (binascii.Error, ValueError, TypeError):
        return None
    dim = flat.size if dim is None else dim
    if dim < 1 or flat.size % dim:
        return None
    return flat.reshape(-1, dim)


def encode(rows: npt.ArrayLike, model: str | None = None, text_hash: str | None = None) -> str:
    """The JSON payload of ``rows`` (one vector or several of one dimension)."""
    matrix = np.atleast_2d(np.asarray(rows, dtype=np.float32))
    data: dict[str, Any] = {}
    if model is not None:
        data["m"] = model
    data["d"] = int(matrix.shape[1])
    if text_hash is not None:
        data["h"] = text_hash
    data["v"] = pack(matrix)
    return json.dumps(data, separators=(",", ":"))


def decode(payload: str, rows: int | None = None) -> StoredVectors | None:
    """The vectors in ``payload``, or None when it is malformed or (``rows`` given) holds another
    number of rows: then they are simply not used."""
    try:
        data = json.loads(payload)
        dim = int(data["d"])
        matrix = unpack(str(data["v"]), dim)
        if matrix is None or (rows is not None and matrix.shape[0] != rows):
            return None
        return StoredVectors(str(data.get("m", "")), dim, str(data.get("h", "")), matrix)
    except (ValueError, KeyError, TypeError):
        return None


def unit_rows(rows: npt.ArrayLike) -> Matrix:
    """``rows`` as float32, each scaled to length 1 (a zero row stays zero)."""
    matrix = np.atleast_2d(np.array(rows, dtype=np.float32))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix
