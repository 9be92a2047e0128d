"""Entry vectors: their stored form, the background worker that computes them, cosine ranking.

A vector is stored in the scope's ``vec`` hash in the index kit's form (:mod:`memstack.index.codec`:
``{"m": model id, "d": dim, "h": text hash, "v": base64 little-endian float32}``). The text hash
ties a vector to the text it was computed from, so a vector computed for an entry's old text is
never used for its new text.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from ..index import codec
from ..index.codec import StoredVectors
from .layout import ScopeKeys, log_change

if TYPE_CHECKING:
    from ..engines import Engine
    from ..search.embedders import Embedder

__all__ = [
    "MAX_INPUT_CHARS",
    "EmbeddingWorker",
    "StoredVector",
    "decode_vector",
    "encode_vector",
    "rank_by_cosine",
    "text_hash",
]

log = logging.getLogger("memstack.longterm")

MAX_INPUT_CHARS: Final = 30_000
"""Embedding input is truncated to this many characters (the seed's ``MaxInputChars``)."""
BATCH_SIZE: Final = 256
"""Texts sent to the embedder in one call by the background worker."""

Matrix = npt.NDArray[np.float32]


StoredVector = StoredVectors
"""A decoded vector payload (the index kit's: its ``vector`` is its one row)."""


def text_hash(text: str) -> str:
    """A short digest of the embedded text."""
    return hashlib.blake2b(text[:MAX_INPUT_CHARS].encode(), digest_size=8).hexdigest()


def encode_vector(model: str, text: str, vector: Matrix) -> str:
    """The stored payload of ``vector``, computed by ``model`` from ``text``."""
    return codec.encode(vector, model, text_hash(text))


def decode_vector(payload: str) -> StoredVector | None:
    """The vector in ``payload``, or None when it is malformed (then it is simply not used)."""
    return codec.decode(payload, rows=1)


def rank_by_cosine(
    query: Matrix, ids: Sequence[str], matrix: Matrix, allowed: set[str] | None = None
) -> list[tuple[str, float]]:
    """``(id, cosine)`` of every row, best first; rows are L2-normalised vectors of ``ids``.

    ``allowed`` restricts the result to those ids (structural filters).
    """
    if not ids:
        return []
    norm = float(np.linalg.norm(query))
    if norm == 0.0:
        return []
    scores = matrix @ (query.astype(np.float32) / norm)
    order = np.argsort(-scores, kind="stable")
    return [(ids[i], float(scores[i])) for i in order if allowed is None or ids[i] in allowed]


class EmbeddingWorker:
    """Computes entry vectors on a background thread; a save only enqueues.

    The thread starts when work arrives and ends when the queue is drained. Each vector is
    written by its own batch guarded by ``require_exists(entry key)``, so a computation still in
    flight when its entry is deleted never resurrects a vector.
    """

    def __init__(self, engine: Engine, keys: ScopeKeys, embedder: Embedder) -> None:
        self._engine, self._keys, self._embedder = engine, keys, embedder
        self._queue: deque[tuple[str, str]] = deque()
        self._cond = threading.Condition()
        self._busy = 0
        self._thread: threading.Thread | None = None

    def submit(self, entry_id: str, text: str) -> None:
        """Queue the vector of ``entry_id`` for ``text``."""
        with self._cond:
            self._queue.append((entry_id, text))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memstack-embed", daemon=True)
                self._thread.start()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued vector is written (or given up); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and self._busy == 0, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._thread = None
                    self._cond.notify_all()
                    return
                jobs = [self._queue.popleft() for _ in range(min(BATCH_SIZE, len(self._queue)))]
                self._busy = len(jobs)
            try:
                self.write(jobs)
            except Exception:  # a background failure must not kill the thread nor reach the caller
                log.warning("computing %d memory vector(s) failed; search uses BM25 only for them",
                            len(jobs), exc_info=True)  # fmt: skip
            finally:
                with self._cond:
                    self._busy = 0
                    self._cond.notify_all()

    def write(self, jobs: Sequence[tuple[str, str]]) -> int:
        """Embed and store ``(id, text)`` jobs now; returns how many vectors were written.

        Raises:
            Exception: whatever the embedder or the engine raises.
        """
        texts = [text[:MAX_INPUT_CHARS] for _, text in jobs]
        vectors = self._embedder.embed(texts)
        written = 0
        for (entry_id, text), vector in zip(jobs, vectors, strict=True):
            batch = self._engine.batch()
            batch.require_exists(self._keys.entry(entry_id))
            batch.hset(self._keys.vectors, {entry_id: encode_vector(self._embedder.model_id, text, vector)})
            log_change(batch, self._keys, "vec", entry_id)
            written += bool(batch.execute().applied)
        return written
