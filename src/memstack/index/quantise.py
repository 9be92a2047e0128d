"""Vectors held in 8 or 4 bits a component, one row per vector, with one float scale per vector.

A scope searched through its approximate graph (:mod:`memstack.index.ann`) keeps its vectors only
to re-score the graph's candidates, and reads the final few back from the engine in float32
(:mod:`memstack.tiers.longterm.ann_exact`). Four bits a component hold 192 bytes at 384 dimensions
instead of 384 at 8 bits: too coarse to rank the top 10 by themselves (a scan of 100,000 clustered
vectors kept 0.72 of the exact top 10 against 0.98 at 8 bits) but enough to pick the best 50 of the
graph's candidates so that the exact top 10 are among them every time (the same probe: 1.000).

Each vector is scaled so that its largest component maps to the top level (127 at 8 bits, 7 at 4):
nothing is clipped. Four-bit levels ``-7 .. 7`` are stored as ``level + 8``, two a byte (the even
component in the high half), so a row is contiguous and a gather of a few hundred rows reads a few
hundred short runs of memory.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["WIDTHS", "Codes", "decode", "empty", "encode", "row_bytes"]

WIDTHS: Final = (4, 8)
Codes = npt.NDArray[np.uint8] | npt.NDArray[np.int8]
Matrix = npt.NDArray[np.float32]


def _top(bits: int) -> int:
    return 7 if bits == 4 else 127


def row_bytes(dim: int, bits: int) -> int:
    """Bytes of one vector's codes."""
    return (dim + 1) // 2 if bits == 4 else dim


def empty(rows: int, dim: int, bits: int) -> Codes:
    """Room for ``rows`` vectors' codes."""
    shape = (rows, row_bytes(dim, bits))
    if bits == 4:
        return np.zeros(shape, dtype=np.uint8)
    return np.zeros(shape, dtype=np.int8)


def encode(rows: Matrix, bits: int) -> tuple[Codes, Matrix]:
    """``(codes, scales)`` of float ``rows`` (``(n, dim)``)."""
    scale = (np.abs(rows).max(axis=1) / np.float32(_top(bits))).astype(np.float32)
    scale[scale == 0] = 1
    levels = np.rint(rows / scale[:, None])
    if bits == 8:
        return levels.astype(np.int8), scale
    nibbles = (levels + 8).astype(np.uint8)
    if nibbles.shape[1] % 2:  # an odd dimension: a zero (level 8) pads the last byte
        nibbles = np.hstack([nibbles, np.full((len(nibbles), 1), 8, dtype=np.uint8)])
    packed: npt.NDArray[np.uint8] = ((nibbles[:, 0::2] << 4) | nibbles[:, 1::2]).astype(np.uint8)
    return packed, scale


def decode(codes: Codes, scales: Matrix, dim: int, bits: int) -> Matrix:
    """The float ``(n, dim)`` rows that ``codes`` and ``scales`` stand for."""
    if bits == 8:
        out: Matrix = codes.astype(np.float32) * scales[:, None]
        return out
    levels = np.empty((len(codes), 2 * codes.shape[1]), dtype=np.float32)
    levels[:, 0::2] = codes >> 4
    levels[:, 1::2] = codes & 15
    levels -= 8
    levels = levels[:, :dim]
    levels *= scales[:, None]
    return levels
