"""``AnnIndex``: an approximate nearest-neighbour graph (HNSW over one bit a component) over string ids.

A scope whose vectors number at least :data:`ANN_FROM` is searched through this graph instead of a
scan of every vector: the graph proposes candidates, the caller re-scores them from the quantised vectors
it holds (a scale per vector) and keeps the best. The library is usearch (an ``embeddings`` extra):
chosen on ``bench/ann_choice.py`` against hnswlib, faiss and voyager (docs/scale.md has the figures):
it has compact vector types, removes a vector for real (faiss's HNSW cannot remove), answers a query
faster than voyager, and serialises to bytes in one call, which the scope's snapshot stores so a new
process loads the graph instead of building it. Without usearch installed :func:`available` is False
and every scope is searched exactly.

Why one bit a component: the graph only has to *find* the neighbourhood; the ranking comes from the
caller's re-score. Each vector is kept as the signs of its components after subtracting a centre
(the mean of the vectors the graph was built from, so that a component every vector shares does not
give every vector the same bit), 48 bytes at 384 dimensions, and the graph walks it by Hamming
distance. On clustered 384-dimensional vectors (100,000, connectivity 16, 100 candidates re-scored
from 8 bits) this found 0.986 of the exact top 100 against 0.952 for usearch's own 8-bit vectors
(whose one scale for every vector blurs small components), and it takes about 290 bytes an entry in
memory (a restored graph's RSS; 197 serialised) against about 640 (533 serialised). Connectivity 12
(165 bytes serialised) keeps 0.989 of the exact top 10 at a million (634 candidates re-scored
exactly; 0.995 at 16). usearch's own ``memory_usage`` says about 510 at 300,000: it counts address
space its allocators reserve and do not touch, so :attr:`AnnIndex.nbytes` counts the serialised
size plus what the resident memory showed beyond it (:data:`SLACK`, :data:`SLACK_ADDED`). Vectors
of few dimensions carry too few bits for this (a 16-dimensional one would be 2 bytes): below
:data:`BITS_FROM` dimensions the graph keeps usearch's 8-bit vectors (cosine, not centred).

Keys: usearch labels are integers. An id's label is a 63-bit digest of the id
(:class:`~memstack.index.labels.LabelTable`: no Python object per entry, about 34 bytes an entry at
a million against 80 for a dict and its int objects); a re-added id gets its label again (usearch
frees a removed label for reuse), and two ids never hold one label at once.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import math
import os
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..foundation.errors import InvalidValue
from .labels import LabelTable

__all__ = ["ANN_FROM", "AnnIndex", "available", "bits", "current", "stats"]

DEFAULT_FROM: Final = 20_000
"""The threshold when ``MEMSTACK_ANN_FROM`` is not set. On clustered, embedder-like vectors
(``bench/scale.py --vectors clustered``) the graph answered 20,000 entries in 1.9-9.6 ms p50 against
14.5-17.9 ms for the scan, with a top-10 overlap of 1.000, and pulls further ahead as the scope grows;
below a few thousand entries the scan costs under a millisecond and the graph saves nothing.
Vectors that are nearly orthogonal (a hashed bag of words: ``--vectors hashed``) are the graph's
worst case (overlap 0.17 at 20,000): an embedder like that wants ``MEMSTACK_ANN_FROM`` set very high."""
ANN_FROM: int = int(os.environ.get("MEMSTACK_ANN_FROM") or DEFAULT_FROM)
"""Vectors in a scope from which its searches go through the graph (exact below; tests lower it)."""
CONNECTIVITY: Final = 12
EXPANSION_ADD: Final = 128
"""Breadth of the search that links a new vector. Bits give many equal Hamming distances, and a
narrow search links a vector to a poorer set of neighbours: at 300,000 clustered vectors, 634
candidates re-scored from 8 bits, 128 found the whole exact top 100 (recall 1.000, the top 10 at
0.984, what the 8-bit re-score itself allows) where 64 found 0.971 of it, for the same build time."""
EXPANSION_SEARCH: Final = 64
SLACK: Final = 62
"""Bytes an entry usearch holds beyond its serialised form in a restored or copied graph: its key
table, a pointer to each node and vector, allocation rounding (300,000 clustered bit vectors at
connectivity 12, usearch alone, the process's RSS after ``malloc_trim``: 62 bytes an entry restored,
62 copied, for 165 serialised)."""
SLACK_ADDED: Final = 106
"""The same for each vector added in this process (a graph built here: 106 an entry; the threads'
build contexts and the allocator's rounding of nodes allocated one by one)."""
BITS_FROM: Final = 256
"""Dimensions from which the graph holds a bit a component. On hashed 48-dimensional vectors (a bag of
words, ``tests/tiers/longterm/test_ann.py``'s corpus) the fused top 10 through a bit graph kept 0.83
of the exact one, 0.94 at 128 dimensions, 1.00 at 192 and 384; below, the 8-bit graph."""
Cosines = npt.NDArray[np.float32]
_MAGIC: Final = b"MSANN2\n"
_CHUNK: Final = 16_384


class _Stats:
    """Process-wide counters: how many graphs were built from vectors and how many were loaded."""

    builds = 0
    loads = 0


stats = _Stats()


@functools.cache
def available() -> bool:
    """True when the ANN library (usearch) is installed (looked up once)."""
    return importlib.util.find_spec("usearch") is not None


def current(data: bytes) -> bool:
    """``data`` is a graph of this format (an older one is rebuilt rather than read)."""
    return data.startswith(_MAGIC)


def _index_class() -> Any:
    """usearch's Index class, imported only when a scope reaches the threshold or a graph loads.

    usearch's wheel carries its own static C++ runtime; once it is loaded, loading onnxruntime (the
    local embedder, same extra) kills the process with a segmentation fault. The other order is
    safe, so onnxruntime, when installed, is loaded first."""
    if importlib.util.find_spec("onnxruntime") is not None:
        importlib.import_module("onnxruntime")
    from usearch.index import Index

    return Index


def bits(dim: int) -> bool:
    """Vectors of ``dim`` components are held as one bit each (else as usearch's 8 bits)."""
    return dim >= BITS_FROM


def _new(dim: int) -> Any:
    return _index_class()(
        ndim=dim,
        metric="hamming" if bits(dim) else "cos",
        dtype="b1" if bits(dim) else "i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


class AnnIndex:
    """An HNSW graph of unit vectors of dimension ``dim`` by id (not thread-safe: the owner locks).

    ``centre``: what is subtracted from every vector before its signs are taken; None: the mean of
    the first vectors given (the graph's build)."""

    def __init__(
        self,
        dim: int,
        graph: Any = None,
        labels: dict[str, int] | None = None,
        centre: npt.ArrayLike | None = None,
    ) -> None:
        self.dim = dim
        self._graph = _new(dim) if graph is None else graph
        self._centre = None if centre is None else np.asarray(centre, dtype=np.float32).reshape(dim)
        self._labels = LabelTable(len(labels or ()))
        if labels:
            self._labels.fill(list(labels), list(labels.values()))
        self._bytes = (-1, 0)  # (len when measured, usearch's serialised length then): it costs ~ms
        self._added = 0  # vectors added in this process (SLACK_ADDED each)

    def __len__(self) -> int:
        return len(self._labels)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._labels

    def ids(self) -> list[str]:
        return [entry_id for entry_id, _ in self._labels.items()]

    @property
    def nbytes(self) -> int:
        """Bytes the graph and its bit vectors hold (usearch's serialised length, re-read when the size
        moved by 1/64 since, plus :data:`SLACK` an entry) and the label maps' (the dict's table, its
        int values, the label array; the ids are the caller's strings)."""
        n, measured = self._bytes
        if abs(len(self._labels) - n) * 64 > n:
            self._bytes = n, measured = len(self._labels), int(self._graph.serialized_length)
        added = min(self._added, len(self._labels))
        return measured + SLACK * len(self._labels) + (SLACK_ADDED - SLACK) * added + self._labels.nbytes

    def share_ids(self, ids: list[str]) -> None:
        """Hold the caller's string objects for the ids (a loaded graph's are its snapshot's, about
        60 bytes an entry more): :attr:`nbytes` leaves the ids out."""
        self._labels.share(ids)

    def copy(self) -> AnnIndex:
        """An independent copy (a snapshot serialises it without holding the owner's lock)."""
        made = AnnIndex(self.dim, self._graph.copy(), None, self._centre)
        made._labels = self._labels.copy()
        return made

    def _coded(self, rows: npt.NDArray[np.float32]) -> npt.NDArray[Any]:
        """``rows`` as the graph takes them: the signs around the centre as bits, or as they are."""
        if not bits(self.dim):
            return np.ascontiguousarray(rows)
        assert self._centre is not None  # set by the first extend
        return np.ascontiguousarray(np.packbits(rows > self._centre, axis=1))

    def extend(self, ids: list[str], vectors: npt.ArrayLike) -> None:
        """Add one vector (a row of ``vectors``) per id not held yet, in one call (built in threads)."""
        rows = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        if self._centre is None:
            self._centre = rows.mean(axis=0, dtype=np.float64).astype(np.float32) if len(ids) else None
            if self._centre is None:
                return
        if len(set(ids)) < len(ids):  # an id given twice: its last vector
            last = sorted({entry_id: n for n, entry_id in enumerate(ids)}.values())
            ids, rows = [ids[n] for n in last], rows[last]
        if len(self._labels):
            for entry_id in ids:
                self.remove(entry_id)
        labels = np.array(self._labels.fill(ids), dtype=np.uint64)
        self._added += len(ids)
        for start in range(0, len(ids), _CHUNK):  # the bits of a chunk at a time, not of every row
            self._graph.add(labels[start : start + _CHUNK], self._coded(rows[start : start + _CHUNK]))

    def add(self, entry_id: str, vector: npt.ArrayLike) -> None:
        """Store ``vector`` under ``entry_id``, replacing its old one."""
        self.extend([entry_id], np.asarray(vector, dtype=np.float32)[None, :])

    def remove(self, entry_id: str) -> bool:
        """Drop ``entry_id``; True if it was there."""
        label = self._labels.remove(entry_id)
        if label is None:
            return False
        self._graph.remove(label)
        return True

    def search(self, vector: npt.ArrayLike, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` ``(id, approximate cosine)`` nearest ``vector``, nearest first (the cosine the
        bits' Hamming distance implies, ``cos(pi x distance / dim)``: rough, for ordering only; below
        :data:`BITS_FROM` dimensions the 8-bit vectors' cosine, within about 0.01)."""
        ids, cosines = self.nearest(vector, k)
        return list(zip(ids.tolist(), cosines.tolist(), strict=True))

    def nearest(self, vector: npt.ArrayLike, k: int) -> tuple[npt.NDArray[np.object_], Cosines]:
        """:meth:`search` as two arrays (ids, approximate cosines), built without a Python loop."""
        if not len(self._labels) or k <= 0:
            return np.empty(0, dtype=object), np.empty(0, dtype=np.float32)
        query = np.asarray(vector, dtype=np.float32).reshape(1, self.dim)
        found = self._graph.search(self._coded(query)[0], min(k, len(self._labels)), exact=False)
        ids = self._labels.ids_of(found.keys)
        held = ids != None  # noqa: E711 (elementwise: a label removed since)
        if not bits(self.dim):
            return ids[held], (1.0 - found.distances[held]).astype(np.float32)
        angle = found.distances[held].astype(np.float64) * (math.pi / self.dim)
        return ids[held], np.cos(angle).astype(np.float32)

    def to_bytes(self, meta: dict[str, object]) -> bytes:
        """The graph, its ids and centre, with a JSON ``meta`` dict, as bytes (:meth:`from_bytes`
        reads them)."""
        centre = base64.b64encode(np.asarray(self._centre, dtype="<f4").tobytes()).decode()
        head = {**meta, "dim": self.dim, "centre": centre if self._centre is not None else None}
        text = json.dumps({**head, "labels": dict(self._labels.items())}, separators=(",", ":"))
        return b"".join([_MAGIC, text.encode(), b"\n", bytes(self._graph.save())])

    @classmethod
    def from_bytes(cls, data: bytes) -> tuple[AnnIndex, dict[str, object]]:
        """The index and meta dict :meth:`to_bytes` wrote.

        Raises:
            InvalidValue: not such bytes (an older format too), or a damaged header or graph.
        """
        index_type = _index_class()

        end = data.find(b"\n", len(_MAGIC))
        if not current(data) or end < 0:
            raise InvalidValue("ANN snapshot: unknown format")
        try:
            head = json.loads(data[len(_MAGIC) : end])
            dim, labels, centre = int(head.pop("dim")), head.pop("labels"), head.pop("centre")
            if centre is not None:
                centre = np.frombuffer(base64.b64decode(centre, validate=True), dtype="<f4")
            # A graph's search depth is not in its snapshot: the restored one is given ours.
            graph = index_type.restore(bytearray(data[end + 1 :]), expansion_search=EXPANSION_SEARCH)
        except (ValueError, TypeError, KeyError, RuntimeError) as exc:
            raise InvalidValue(f"ANN snapshot: damaged ({exc})") from None
        if graph is None or not isinstance(labels, dict) or len(graph) != len(labels) or graph.ndim != dim:
            raise InvalidValue("ANN snapshot: the graph and its ids disagree")
        if (centre is None and labels) or (centre is not None and len(centre) != dim):
            raise InvalidValue("ANN snapshot: the graph and its centre disagree")
        return cls(dim, graph, {str(k): int(v) for k, v in labels.items()}, centre), head
