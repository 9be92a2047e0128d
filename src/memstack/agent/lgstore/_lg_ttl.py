"""LangGraph's TTL sweep for the memstack store: ``sweep_ttl`` and the sweeper thread.

Items expire by themselves on every engine (the engine's TTL: a read never sees an expired item).
What a sweep does is LangGraph's contract around that: it removes for good what the engine expired,
the item's entry in the namespace's ids set, expiry zset and vectors (logged as a deletion, so
every process's cache drops it), and reports how many items that was. Each namespace that ever
held an item with a TTL is swept in batches of :data:`SWEEP_CHUNK`, each guarded by
``require_missing`` of its items, so an item put again meanwhile is never touched.

In a child made by ``fork`` (see :mod:`~memstack.foundation.forks`) a store whose sweeper ran in the
parent sweeps again from its first batch there, in a thread of its own; the parent's future stays
the parent's.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
from collections.abc import Callable
from typing import Final

from ...engines import Engine
from ...foundation.forks import renew_in_children
from ._lg_cache import namespaces
from ._lg_layout import NamespaceKeys
from ._lg_write import ATTEMPTS, queue_prune

__all__ = ["SWEEP_CHUNK", "Sweeper", "sweep"]

log = logging.getLogger("memstack.doors.integrations.langgraph")

SWEEP_CHUNK: Final = 256
"""Expired items removed per batch."""


def sweep(engine: Engine) -> int:
    """Remove what the engine expired from every namespace's bookkeeping; how many items that was.

    Raises:
        EngineError: the engine failed (what was swept before stays swept).
    """
    _, timed = namespaces(engine)
    swept = 0
    for code in sorted(timed):
        keys = NamespaceKeys.of(engine, code)
        expired = engine.zrangebyscore(keys.expiry, -math.inf, engine.now_ms())
        for start in range(0, len(expired), SWEEP_CHUNK):
            swept += _sweep_chunk(engine, keys, [k for k, _ in expired[start : start + SWEEP_CHUNK]])
    return swept


def _sweep_chunk(engine: Engine, keys: NamespaceKeys, candidates: list[str]) -> int:
    for _ in range(ATTEMPTS):
        raws = engine.mget([keys.item(k) for k in candidates])
        gone = [k for k, raw in zip(candidates, raws, strict=True) if raw is None]
        if not gone:
            return 0
        batch = engine.batch()
        queue_prune(batch, keys, gone)
        if batch.execute().applied:
            return len(gone)
    return 0  # kept changing under writers: the next sweep takes them


class Sweeper:
    """A daemon thread calling a sweep every ``interval`` minutes until stopped."""

    def __init__(self) -> None:
        self._job: tuple[Callable[[], int], float] | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """No thread (the parent's is not this process's), new lock and stop flag; a sweeper the
        parent ran (started, not stopped) starts again at :meth:`ensure`."""
        self._due = self._thread is not None and not self._stop.is_set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def ensure(self) -> None:
        """In a forked child, on the store's first batch: start the sweeping the parent did."""
        if not self._due:
            return
        with self._lock:
            job, self._due = self._job, False
            if job is None or self._thread is not None:
                return
            self._thread = threading.Thread(
                target=self._loop,
                args=(*job, concurrent.futures.Future()),
                name="memstack-lg-ttl",
                daemon=True,
            )
            self._thread.start()

    def start(self, run: Callable[[], int], minutes: float) -> concurrent.futures.Future[None]:
        """Start sweeping (``run()`` returns the count swept); the future resolves when the thread
        stops, and cancelling it stops the thread. A start while one runs starts nothing: its future
        only stops the running thread when cancelled (LangGraph's stores do the same)."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return future
            self._stop.clear()
            self._job, self._due = (run, minutes * 60.0), False
            thread = threading.Thread(
                target=self._loop, args=(run, minutes * 60.0, future), name="memstack-lg-ttl", daemon=True
            )
            self._thread = thread
            thread.start()
        return future

    def _loop(self, run: Callable[[], int], seconds: float, future: concurrent.futures.Future[None]) -> None:
        while not self._stop.wait(seconds):
            try:
                swept = run()
                if swept:
                    log.info("LangGraph store: swept %d expired item(s)", swept)
            except Exception:  # a failing sweep must not end the sweeper
                log.exception("LangGraph store: TTL sweep failed")
        if not future.done():
            future.set_result(None)

    def stop(self, timeout: float | None = None) -> bool:
        """Stop the thread; True when it stopped (or was not running) within ``timeout`` seconds."""
        with self._lock:
            thread = self._thread
        if thread is None or not thread.is_alive():
            return True
        self._stop.set()
        thread.join(timeout)
        if thread.is_alive():
            return False
        with self._lock:
            if self._thread is thread:
                self._thread = None
        return True
