"""Clocks: the one source of time for everything time-based in memstack.

Every tier and engine takes a :class:`Clock`. Production code uses :class:`SystemClock`; tests
inject a :class:`ManualClock` and move time with :meth:`ManualClock.advance`, so no test ever
sleeps to wait for a TTL.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable

from .forks import renew_in_children

__all__ = ["Clock", "ManualClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """Anything with ``now()`` returning seconds since the Unix epoch as a float."""

    def now(self) -> float:
        """Seconds since the Unix epoch."""
        ...


class SystemClock:
    """Wall-clock time (``time.time()``)."""

    def now(self) -> float:
        """Seconds since the Unix epoch, from the operating system."""
        return time.time()

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A clock that moves only when told to; thread-safe.

    Starts at the current wall-clock time by default, so data written under it looks recent.

    Raises:
        ValueError: from :meth:`advance` with a negative amount (time never goes back).
    """

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else float(start)
        self._lock = threading.Lock()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """In a forked child: a new lock (a parent thread reading the time at the fork held it)."""
        self._lock = threading.Lock()

    def now(self) -> float:
        """The current manual time."""
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` and return the new time."""
        if seconds < 0:
            raise ValueError(f"ManualClock.advance({seconds!r}): time only moves forward")
        with self._lock:
            self._now += seconds
            return self._now

    def set(self, when: float) -> None:
        """Jump to ``when`` (must not be earlier than the current time)."""
        with self._lock:
            if when < self._now:
                raise ValueError(f"ManualClock.set({when!r}): earlier than now ({self._now!r})")
            self._now = float(when)

    def __repr__(self) -> str:
        return f"ManualClock({self._now!r})"
