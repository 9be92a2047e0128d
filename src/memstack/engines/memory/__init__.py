"""The in-process engine (``memory://``): thread-safe dicts under one lock, lost at exit.

A product feature for tests and single-process demos, and the reference the conformance suite
holds the other engines to. Atomic batches run under the lock with an undo log, so a failing
command leaves nothing of its batch behind.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence

from ...foundation.clock import Clock
from ...foundation.errors import EngineClosed
from ...foundation.forks import Flag, renew_in_children
from ...foundation.redact import redact_url
from .._checks import check_ops
from .._dispatch import Dispatcher
from .._local_ops import apply
from .._raw import raw_text
from .._sweeper import Sweeper
from ..base import BatchResult, Engine, Op, Subscription
from .ops import OPS
from .tx import Entry, Tx, dead

__all__ = ["MemoryEngine"]

# Each memory engine holds its own data, so caches must never confuse two of them.
_INSTANCES = itertools.count(1)


class MemoryEngine(Engine):
    """``memory://``: everything in this process.

    Args:
        url: kept for display.
        clock: time source for TTLs.
        sweep_interval: seconds between background sweeps of expired keys (None: lazy only).
        sweep_limit: most keys one sweep removes (keeps the lock hold short).
    """

    name = "memory"

    def __init__(
        self,
        url: str = "memory://",
        clock: Clock | None = None,
        *,
        sweep_interval: float | None = 1.0,
        sweep_limit: int = 1000,
    ) -> None:
        super().__init__(url, clock)
        self._identity = f"{url}#{next(_INSTANCES)}"
        self._data: dict[str, Entry] = {}
        self._expiries: list[tuple[int, str]] = []  # heap; stale items are skipped lazily
        self._lock = threading.RLock()
        self._dispatch = Dispatcher("memory")
        self._closed = Flag()
        self._sweep_limit = sweep_limit
        self._sweeper = Sweeper("memory", self._closed, sweep_interval, self.sweep, self.url)
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """In a forked child (a copy of the data): a new lock, which no parent thread holds."""
        self._lock = threading.RLock()

    @property
    def identity(self) -> str:
        return self._identity

    # -- engine API --------------------------------------------------------------------------
    def execute(self, ops: Sequence[Op]) -> BatchResult:
        if self._closed.is_set():
            raise EngineClosed(f"{redact_url(self.url)}: engine is closed")
        self._sweeper.ensure()
        check_ops(ops)
        with self._lock:
            tx = Tx(self._data, self._expiries, self.now_ms())
            try:
                applied, results = apply(OPS, tx, ops)
            except BaseException:
                tx.rollback()
                raise
            if not applied:
                tx.rollback()  # check_ops put every guard before the first write: a no-op
                return BatchResult(False, results)
        for channel, message in tx.published:
            self._dispatch.deliver(channel, message)
        return BatchResult(True, results)

    def scan(self, prefix: str) -> Iterator[str]:
        self._sweeper.ensure()
        with self._lock:
            now = self.now_ms()
            keys = [k for k, e in self._data.items() if k.startswith(prefix) and not dead(e, now)]
        return iter(keys)

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        return self._dispatch.subscribe(channel, callback)

    def raw_items(self) -> Iterator[tuple[str, str]]:
        """Every key, expired ones not yet purged included (messages in flight are not stored)."""
        with self._lock:
            items = [(key, entry.kind, _frozen(entry)) for key, entry in self._data.items()]
        return ((key, raw_text(key, kind, value)) for key, kind, value in items)

    def flush(self) -> None:
        with self._lock:
            self._data.clear()
            self._expiries.clear()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._dispatch.close()
        self._sweeper.join()

    def sweep(self) -> int:
        """Remove up to ``sweep_limit`` expired keys now; returns how many went."""
        removed = 0
        with self._lock:
            now = self.now_ms()
            while self._expiries and self._expiries[0][0] <= now and removed < self._sweep_limit:
                _, key = heapq.heappop(self._expiries)
                entry = self._data.get(key)
                if entry is not None and entry.expire is not None and entry.expire <= now:
                    del self._data[key]
                    removed += 1
        return removed


def _frozen(entry: Entry) -> object:
    """A copy of an entry's value, taken under the lock (the caller renders it after)."""
    if entry.kind == "zset":
        return [(m, s) for s, m in entry.value.order]
    if entry.kind in ("hash", "set", "list"):
        return type(entry.value)(entry.value)
    return entry.value
