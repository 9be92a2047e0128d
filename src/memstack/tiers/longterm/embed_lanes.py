"""The background threads that compute entry vectors: one long-lived thread per embedder.

A save only enqueues its vector on its scope's :class:`~.vectors.EmbeddingWorker`; the worker's
*lane*, the one thread of its embedder, computes the queued vectors scope by scope (a batch of one
scope at a time, scopes in turn). The thread waits for work instead of ending when a queue drains:
starting a thread on every save cost about 4 ms under load. One thread per embedder, not per
scope, so a process serving 100,000 scopes holds one thread per model, and a scope with a slow
model of its own never holds up the others.

A lane's thread runs while some worker that submitted to it is open: the last one to close stops
and joins it, and one dropped without a close wakes the thread, which ends when none is left.

A child made by ``fork`` inherits the lanes but not their threads (nor locks a thread of the parent
held): it forgets them, and so does each worker, so the child's first save starts a lane of its own.
The jobs queued at the fork stay the parent's to compute.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Sequence
from typing import Final, Protocol

__all__ = ["IDLE_CHECK", "JOIN_TIMEOUT", "Lane", "Queued", "stop_lanes", "submit"]

log = logging.getLogger("memstack.tiers.longterm")

IDLE_CHECK: Final = 1.0
"""Seconds between an idle lane's checks that some worker still uses it (a backstop: a dropped
worker wakes its lane)."""
JOIN_TIMEOUT: Final = 60.0
"""Longest wait for a lane's current batch when it stops (a remote embedder's requests time out
well before)."""


class Queued(Protocol):
    """What a lane needs of a worker (:class:`~.vectors.EmbeddingWorker`); its fields are
    guarded by the lane's condition."""

    queue: deque[tuple[str, str]]
    busy: int
    closed: bool
    scheduled: bool

    def write(self, jobs: Sequence[tuple[str, str]]) -> int: ...

    def forget_lane(self) -> None: ...


class Lane:
    """The thread of one embedder and the workers waiting for it (see the module)."""

    def __init__(self, embedder: object, batch: int) -> None:
        self.key, self.batch = id(embedder), batch
        self.embedder = embedder  # alive while the lane is known by its id
        # Reentrant: a worker's finalizer wakes the lane, and a garbage collection may run it on a
        # thread that holds the condition already.
        self.cond = threading.Condition(threading.RLock())
        self.workers: weakref.WeakSet[Queued] = weakref.WeakSet()
        self.ready: deque[Queued] = deque()
        self.stopping = False
        self.thread: threading.Thread | None = None

    def _submit(self, worker: Queued, job: tuple[str, str]) -> None:
        # Caller holds _lanes_lock: the lane is not retiring.
        with self.cond:
            if worker not in self.workers:
                self.workers.add(worker)
                # A worker dropped without a close: the lane looks at once whether it still has any.
                weakref.finalize(worker, self._wake).atexit = False
            worker.queue.append(job)
            if not worker.scheduled:
                worker.scheduled = True
                self.ready.append(worker)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="memstack-embed", daemon=True)
                self.thread.start()
            self.cond.notify_all()

    def _next(self) -> tuple[Queued, list[tuple[str, str]]] | None:
        """The next batch, waiting for one; None when the lane stops."""
        with self.cond:
            while True:
                batch = self._take()
                if batch is not None:
                    return batch
                if self.stopping:
                    self.thread = None
                    self.cond.notify_all()
                    return None
                if not self.cond.wait(IDLE_CHECK) and not self.workers:
                    _retire(self)  # every worker went without a close: stop (re-checked under locks)

    def _take(self) -> tuple[Queued, list[tuple[str, str]]] | None:
        # Caller holds self.cond.
        while self.ready:
            worker = self.ready.popleft()
            if worker.closed or not worker.queue:
                worker.scheduled = False
                continue
            jobs = [worker.queue.popleft() for _ in range(min(self.batch, len(worker.queue)))]
            worker.busy = len(jobs)
            return worker, jobs
        return None

    def _run(self) -> None:
        while (batch := self._next()) is not None:
            self._work(*batch)
            del batch  # hold no worker while waiting: one dropped without a close can go

    def _work(self, worker: Queued, jobs: list[tuple[str, str]]) -> None:
        try:
            worker.write(jobs)
        except Exception:  # a background failure must not kill the thread nor reach the caller
            log.warning("computing %d memory vector(s) failed; search uses BM25 only for them",
                        len(jobs), exc_info=True)  # fmt: skip
        finally:
            with self.cond:
                worker.busy = 0
                if worker.queue and not worker.closed:
                    self.ready.append(worker)  # after the other scopes waiting: each in turn
                else:
                    worker.scheduled = False
                self.cond.notify_all()

    def _wake(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def release(self, worker: Queued) -> None:
        """``worker`` closed: when it was the lane's last, stop the thread and wait for it (it is
        idle: every worker's queue is empty or given up)."""
        with _lanes_lock, self.cond:
            self.workers.discard(worker)
            if self.workers:
                return
            self._stop()
        self._join()

    def _stop(self) -> None:
        # Caller holds _lanes_lock and self.cond.
        self.stopping = True
        if _lanes.get(self.key) is self:
            del _lanes[self.key]
        self.cond.notify_all()

    def _join(self) -> None:
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(JOIN_TIMEOUT)


_lanes_lock = threading.Lock()
_lanes: dict[int, Lane] = {}  # by id of the embedder (which the lane keeps alive)


def submit(embedder: object, worker: Queued, job: tuple[str, str], batch: int) -> Lane:
    """Queue ``job`` for ``worker`` on the lane of ``embedder`` (made, and its thread started, on
    first use), computed in batches of up to ``batch`` texts; returns the lane."""
    with _lanes_lock:
        lane = _lanes.get(id(embedder))
        if lane is None:
            lane = _lanes[id(embedder)] = Lane(embedder, batch)
        lane._submit(worker, job)
        return lane


def _retire(lane: Lane) -> None:
    # Called by the lane's thread holding lane.cond: the locks are taken in the order every other
    # path takes them (the module lock first) by releasing the condition while waiting for it.
    lane.cond.release()
    try:
        with _lanes_lock, lane.cond:
            if not lane.workers and not lane.ready:
                lane._stop()
    finally:
        lane.cond.acquire()


def stop_lanes() -> None:
    """Stop every lane's thread after its current batch (at exit, once every worker is closed)."""
    with _lanes_lock:
        lanes = list(_lanes.values())
        for lane in lanes:
            with lane.cond:
                lane._stop()
    for lane in lanes:
        lane._join()


def _forget_lanes_in_child() -> None:
    # After a fork, in the child: no thread of the parent runs here, so a lane's thread or a lock
    # it held would leave every save and flush waiting (tests/tiers/longterm/test_embed_lanes.py).
    global _lanes_lock, _lanes
    inherited = list(_lanes.values())
    _lanes_lock, _lanes = threading.Lock(), {}
    for lane in inherited:
        for worker in list(lane.workers):
            worker.forget_lane()


os.register_at_fork(after_in_child=_forget_lanes_in_child)
