"""Board watchers, bounded: one subscription per board, a cap per key and per tenant.

Each event stream (``GET /v1/shared/{name}/events`` and the inspector's) used to subscribe on
its own, and every subscription had its own drainer: 2,000 streams on one key held 2,000
threads after one write. :class:`WatchHub` keeps **one** subscription per (tenant, board),
however many watch it, and hands each change to every stream's queue. A key may hold at most
:attr:`WatchHub.per_key` streams and a tenant :attr:`WatchHub.per_tenant`: one more is refused
with 429 and ``Retry-After`` before it starts. A stream that sees no change for
:attr:`WatchHub.idle_seconds` is ended (clients of server-sent events reconnect on their own), and
a stream whose reader falls :data:`QUEUE_SIZE` changes behind is ended rather than buffered.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

from starlette.exceptions import HTTPException

from ...foundation.errors import InvalidConfiguration
from ...services.memory import Memory
from ...tiers.shared import MemoryChange, SharedMemory
from .defaults import WATCH_IDLE_SECONDS, WATCH_PER_KEY, WATCH_PER_TENANT

__all__ = ["QUEUE_SIZE", "WatchHub", "Watcher"]

QUEUE_SIZE: Final = 1000
"""Changes a stream may be behind before it is ended."""
RETRY_SECONDS: Final = 30


@dataclass(eq=False)
class Watcher:
    """One stream's side of a board: its queue (a ``None`` item ends it)."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[dict[str, Any] | None] = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE + 1))
    shared: SharedMemory | None = None

    def offer(self, change: dict[str, Any]) -> None:
        """Called in the event loop: queue ``change``, or end a stream that fell too far behind."""
        if self.queue.qsize() >= QUEUE_SIZE:
            self.queue.put_nowait(None)
        elif self.queue.qsize() < QUEUE_SIZE:
            self.queue.put_nowait(change)


@dataclass(eq=False)
class _Board:
    shared: SharedMemory
    watchers: set[Watcher] = field(default_factory=set)


class WatchHub:
    """The watchers of one server."""

    def __init__(
        self,
        per_key: int = WATCH_PER_KEY.default,
        per_tenant: int = WATCH_PER_TENANT.default,
        idle_seconds: float = WATCH_IDLE_SECONDS.default,
    ) -> None:
        for name, value in (("per_key", per_key), ("per_tenant", per_tenant)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
                raise InvalidConfiguration(f"watch {name} {value!r}: must be an int from 1 to 100000")
        if (
            isinstance(idle_seconds, bool)
            or not isinstance(idle_seconds, int | float)
            or not 1 <= idle_seconds <= 86400
        ):
            raise InvalidConfiguration(f"watch idle_seconds {idle_seconds!r}: must be 1 to 86400 seconds")
        self.per_key, self.per_tenant, self.idle_seconds = per_key, per_tenant, idle_seconds
        self._boards: dict[tuple[str, str], _Board] = {}
        self._by_key: Counter[str] = Counter()
        self._by_tenant: Counter[str] = Counter()
        self._lock = threading.Lock()

    def check(self, tenant: str, key: str) -> None:
        """Refuse a stream before it starts when ``key`` or ``tenant`` holds its cap.

        Raises:
            HTTPException: 429 with ``Retry-After``.
        """
        with self._lock:
            self._check(tenant, key)

    def _check(self, tenant: str, key: str) -> None:
        if self._by_key[key] >= self.per_key or self._by_tenant[tenant] >= self.per_tenant:
            held = "this key" if self._by_key[key] >= self.per_key else f"tenant {tenant!r}"
            cap = self.per_key if held == "this key" else self.per_tenant
            raise HTTPException(
                429,
                f"{held} already holds {cap} event streams; close one or retry in {RETRY_SECONDS} s",
                headers={"Retry-After": str(RETRY_SECONDS)},
            )

    def open(self, tenant: str, key: str, memory: Memory, name: str) -> Watcher:
        """A new stream's watcher on board ``name`` (call from the event loop, as the stream
        starts: a stream that never starts holds nothing).

        Raises:
            HTTPException: 429 when ``key`` or ``tenant`` holds its cap of streams.
            InvalidKey: a malformed board name.
        """
        watcher = Watcher(asyncio.get_running_loop())
        with self._lock:
            self._check(tenant, key)
            board = self._boards.get((tenant, name))
            if board is None:
                board = self._boards[(tenant, name)] = _Board(
                    SharedMemory(memory.engine, name, enable_cache=False)
                )
                board.shared.subscribe_pattern("*", functools.partial(self._fan_out, board))
            board.watchers.add(watcher)
            watcher.shared = board.shared
            self._by_key[key] += 1
            self._by_tenant[tenant] += 1
        return watcher

    def close(self, tenant: str, key: str, name: str, watcher: Watcher) -> None:
        """End ``watcher``'s share; the board's subscription ends with its last watcher."""
        closing = None
        with self._lock:
            board = self._boards.get((tenant, name))
            if board is None or watcher not in board.watchers:
                return
            board.watchers.discard(watcher)
            for counts, who in ((self._by_key, key), (self._by_tenant, tenant)):
                counts[who] -= 1
                if counts[who] <= 0:
                    del counts[who]
            if not board.watchers:
                closing = self._boards.pop((tenant, name)).shared
        if closing is not None:
            closing.close()

    def streams(self) -> int:
        """Streams open now."""
        with self._lock:
            return sum(len(b.watchers) for b in self._boards.values())

    def _fan_out(self, board: _Board, change: MemoryChange) -> None:
        data = change.to_dict()
        with self._lock:
            watchers = list(board.watchers)
        for watcher in watchers:
            watcher.loop.call_soon_threadsafe(watcher.offer, data)
