"""Entry vectors: their stored form, the background worker that computes them, cosine ranking.

A vector is stored in the scope's ``vec`` hash in the index kit's form (:mod:`memstack.index.codec`:
``{"m": model id, "d": dim, "h": text hash, "v": base64 little-endian float32}``). The text hash
ties a vector to the text it was computed from, so a vector computed for an entry's old text is
never used for its new text.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np
import numpy.typing as npt

from ...foundation.forks import renew_in_children
from ...index import codec
from ...index.codec import StoredVectors
from .embed_lanes import JOIN_TIMEOUT, Lane, stop_lanes, submit
from .layout import ScopeKeys, log_change

if TYPE_CHECKING:
    from ...engines import Engine
    from ...search.embedders import Embedder

__all__ = [
    "JOIN_TIMEOUT",
    "MAX_INPUT_CHARS",
    "EmbeddingWorker",
    "StoredVector",
    "decode_vector",
    "encode_vector",
    "rank_by_cosine",
    "stop_at_exit",
    "text_hash",
]

log = logging.getLogger("memstack.tiers.longterm")

MAX_INPUT_CHARS: Final = 30_000
"""Embedding input is truncated to this many characters (RockBot's ``MaxInputChars``)."""
BATCH_SIZE: Final = 64
"""Texts sent to the embedder in one call by the background worker: small enough that stopping
the worker (at close, at exit) waits for well under a second of model time."""

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
    """Computes the vectors of one scope in the background; a save only enqueues.

    The vectors are computed on the long-lived thread of the embedder's lane
    (:mod:`.embed_lanes`), which waits for work between saves. Each vector is written by its own
    batch guarded by ``require_exists(entry key)``, so a computation still in flight when its
    entry is deleted never resurrects a vector.

    :meth:`close` finishes the queue within a time bound and hands the rest over: those entries
    stay without a vector, which any process with an embedder fills in
    (:class:`~memstack.tiers.longterm.backfill.VectorFollower`). The lane's thread stops when its
    last worker closes, and no thread is ever left inside the embedder when the interpreter exits
    (see :func:`stop_at_exit`).
    """

    def __init__(self, engine: Engine, keys: ScopeKeys, embedder: Embedder) -> None:
        self._engine, self._keys, self._embedder = engine, keys, embedder
        # Guarded by the lane's condition (see embed_lanes.Queued).
        self.queue: deque[tuple[str, str]] = deque()
        self.busy = 0
        self.closed = False
        self.scheduled = False
        self._gate = threading.Lock()  # a submit and a close never cross
        self._lane: Lane | None = None  # from the first submit on
        track(self)
        renew_in_children(self)  # its gate too, when it is in no lane at the fork

    def _renew_in_child(self) -> None:
        """In a forked child: see :meth:`forget_lane`."""
        self.forget_lane()

    def submit(self, entry_id: str, text: str) -> None:
        """Queue the vector of ``entry_id`` for ``text`` (after :meth:`close`: left to followers)."""
        with self._gate:
            if not self.closed:
                self._lane = submit(self._embedder, self, (entry_id, text), BATCH_SIZE)

    def forget_lane(self) -> None:
        """In a child made by ``fork``: drop the parent's lane (its thread does not run here) and the
        jobs queued at the fork (the parent computes them); the next submit starts a lane here."""
        self._gate = threading.Lock()
        self.queue.clear()
        self.busy, self.scheduled, self._lane = 0, False, None

    def serves(self, keys: ScopeKeys) -> bool:
        """True when this worker writes the vectors of the scope of ``keys``."""
        return self._keys.ids == keys.ids

    def _drained(self) -> bool:
        return not self.queue and self.busy == 0

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued vector is written (or given up); False on timeout."""
        lane = self._lane
        if lane is None:
            return True
        with lane.cond:
            return lane.cond.wait_for(self._drained, timeout)

    def close(self, timeout: float | None = None) -> int:
        """Write the queued vectors for up to ``timeout`` seconds (None: all of them), then stop
        after the batch in flight; returns how many were left to other processes. Idempotent.
        """
        self.flush(timeout)
        with self._gate:
            lane = self._lane
            if lane is None:
                self.closed = True
                untrack(self)
                return 0
            with lane.cond:
                already = self.closed
                self.closed = True
                left = len(self.queue)
                self.queue.clear()
                if lane.thread is not threading.current_thread():
                    lane.cond.wait_for(lambda: self.busy == 0, JOIN_TIMEOUT)  # one batch at most
        if not already:
            lane.release(self)
        untrack(self)
        if left:
            log.info(
                "%d memory vector(s) not computed before close; a process with an embedder "
                "(memstack serve, memstack.open) fills them in", left,
            )  # fmt: skip
        return left

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


class _Stoppable(Protocol):
    def close(self, timeout: float | None = None) -> int: ...


_running: weakref.WeakSet[_Stoppable] = weakref.WeakSet()


READ_YOUR_WRITES_WAIT: Final = 2.0
"""How long a search waits, at most, for the vectors its own process is computing for its scope."""


def wait_pending(keys: ScopeKeys, timeout: float = READ_YOUR_WRITES_WAIT) -> bool:
    """Wait up to ``timeout`` seconds in all for this process's embedding workers of the scope of
    ``keys`` to write their queued vectors (a search then ranks a just-saved entry with its vector);
    False when some were still computing. Workers of other scopes are not waited for."""
    deadline = time.monotonic() + timeout
    for worker in [w for w in list(_running) if isinstance(w, EmbeddingWorker) and w.serves(keys)]:
        if not worker.flush(max(0.0, deadline - time.monotonic())):
            return False
    return True


def track(background: _Stoppable) -> None:
    """Have :func:`stop_at_exit` stop ``background`` (a thread owner with ``close(timeout)``)."""
    _running.add(background)


def untrack(background: _Stoppable) -> None:
    """Forget ``background`` (it stopped)."""
    _running.discard(background)


def stop_at_exit() -> None:
    """Stop every embedding thread still running, each after its current batch (registered with
    :mod:`atexit`; queued work is handed over to other processes).

    Why: at interpreter exit a daemon thread that returns from native code which released the GIL
    (onnxruntime's ``run``) is ended with ``pthread_exit``; the forced unwinding through the
    runtime's C++ frames calls ``std::terminate`` and the process aborts (exit 134, "terminate
    called without an active exception"). atexit handlers run before that point, while the
    threads still run normally, so joining them here leaves none inside the model.
    """
    for background in list(_running):
        try:
            background.close(0)
        except Exception:  # exiting: report, never raise from an atexit handler
            log.warning("stopping a background embedding thread at exit failed", exc_info=True)
    stop_lanes()  # the lanes of workers dropped without a close


atexit.register(stop_at_exit)
