"""Blocking reads: waiters woken by change notifications, one core for sync and async callers.

Race-freedom comes from the order of the core: the waiter is registered (and the memory's engine
subscription is live) BEFORE the present keys are read, so a write that lands between the read
and the wait still reaches the waiter through its notification.

The core (:func:`wait_core`) is a generator that yields how long to sleep (None = no limit);
:func:`run_sync` drives it with a ``threading.Event``, :func:`run_async` with an ``asyncio.Event``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import threading
import time
from collections.abc import Callable, Generator, Sequence
from typing import Any

from ...foundation.errors import EngineClosed, WaitTimeout
from ...foundation.forks import renew_in_children

__all__ = ["Waiter", "WaiterSet", "run_async", "run_sync", "timeout_message", "wait_core"]

WaitStep = Generator[float | None, None, dict[str, Any]]


class Waiter:
    """Interest in some keys; collects the first value seen for each and signals on progress."""

    def __init__(self, keys: Sequence[str], signal: Callable[[], None]) -> None:
        self.keys = frozenset(keys)
        self.found: dict[str, Any] = {}
        self.cancelled = False
        self._signal = signal
        self._lock = threading.Lock()

    def offer(self, key: str, value: Any) -> None:
        """Record ``value`` for ``key`` (first value wins) and wake the waiting caller."""
        with self._lock:
            if key not in self.keys or key in self.found:
                return
            self.found[key] = copy.deepcopy(value)  # each waiter owns what it returns
        self._signal()

    def cancel(self) -> None:
        """Wake the caller for good: the memory is closing."""
        self.cancelled = True
        self._signal()

    @property
    def complete(self) -> bool:
        """True once every key has a value."""
        with self._lock:
            return len(self.found) == len(self.keys)

    def missing(self, order: Sequence[str]) -> list[str]:
        """The keys still without a value, in ``order``."""
        with self._lock:
            return [k for k in order if k not in self.found]


class WaiterSet:
    """The live waiters of one shared memory."""

    def __init__(self) -> None:
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """No waiter and a new lock (also the first state): in a forked child the parent's waiters
        are its threads', which do not run there."""
        self._waiters: set[Waiter] = set()
        self._lock = threading.Lock()

    def add(self, waiter: Waiter) -> None:
        with self._lock:
            self._waiters.add(waiter)

    def discard(self, waiter: Waiter) -> None:
        with self._lock:
            self._waiters.discard(waiter)

    def notify(self, key: str, value: Any) -> None:
        """Offer ``value`` to every waiter interested in ``key``."""
        with self._lock:
            interested = [w for w in self._waiters if key in w.keys]
        for waiter in interested:
            waiter.offer(key, value)

    def cancel_all(self) -> None:
        """Wake every waiter with a cancellation (used by ``close``)."""
        with self._lock:
            waiters, self._waiters = list(self._waiters), set()
        for waiter in waiters:
            waiter.cancel()


def timeout_message(missing: Sequence[str], wait: object) -> str:
    """The text of the timeout error: names the keys not seen and the time allowed."""
    keys = ", ".join(repr(k) for k in missing)
    return f"Timeout waiting for {keys} after {wait} seconds"


def wait_core(
    keys: Sequence[str],
    *,
    waiter: Waiter,
    waiters: WaiterSet,
    present: Callable[[Sequence[str]], dict[str, Any]],
    timeout: float | None,
    label: object,
    monotonic: Callable[[], float] = time.monotonic,
) -> WaitStep:
    """Wait until every key of ``keys`` has a value; ONE deadline for all of them.

    ``present(keys)`` reads the keys that exist now (after registration, so nothing is missed).
    Returns ``{key: value}`` in the order of ``keys``.

    Raises:
        WaitTimeout: the deadline passed; the message names the missing keys and ``label``.
        EngineClosed: the memory was closed while waiting.
    """
    deadline = None if timeout is None else monotonic() + timeout
    waiters.add(waiter)
    try:
        for key, value in present(keys).items():
            waiter.offer(key, value)
        while not waiter.complete:
            if waiter.cancelled:
                raise EngineClosed(f"shared memory closed while waiting for {waiter.missing(keys)}")
            if deadline is None:
                yield None
                continue
            remaining = deadline - monotonic()
            if remaining <= 0:
                raise WaitTimeout(timeout_message(waiter.missing(keys), label))
            yield remaining
        return {k: waiter.found[k] for k in keys}
    finally:
        waiters.discard(waiter)


class _Driven:
    """A wait core driven by a loop: iterate :meth:`pauses` (each pause a wait on the signal), then
    read :attr:`result`; closing the iteration early closes the core (unregistering its waiter)."""

    def __init__(self, steps: WaitStep) -> None:
        self._steps = steps
        self.result: dict[str, Any] = {}

    def pauses(self) -> Generator[float | None, None, None]:
        self.result = yield from self._steps


def run_sync(make: Callable[[Waiter], WaitStep], keys: Sequence[str]) -> dict[str, Any]:
    """Drive the core on this thread."""
    event = threading.Event()
    driven = _Driven(make(Waiter(keys, event.set)))
    # closed on the way out: an interrupted wait (KeyboardInterrupt) unregisters its waiter at once
    with contextlib.closing(driven.pauses()) as pauses:
        for pause in pauses:
            event.wait(pause)
            event.clear()
    return driven.result


async def run_async(make: Callable[[Waiter], WaitStep], keys: Sequence[str]) -> dict[str, Any]:
    """Drive the core on the running event loop (never blocks the loop while waiting)."""
    loop = asyncio.get_running_loop()
    event = asyncio.Event()

    def signal() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody is waiting any more
            loop.call_soon_threadsafe(event.set)

    driven = _Driven(make(Waiter(keys, signal)))
    with contextlib.closing(driven.pauses()) as pauses:  # a cancelled task unregisters its waiter at once
        for pause in pauses:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), pause)
            event.clear()
    return driven.result
