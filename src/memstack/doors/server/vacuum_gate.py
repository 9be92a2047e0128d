"""Who may rebuild the SQLite file, and how often: admin keys only, once per interval.

``POST /v1/forget`` with ``vacuum: true`` rebuilds the whole database file: every tenant's
writes stall while it runs (seconds on a large file). A tenant's own key may forget its own data
but not stall everyone: the rebuild takes an admin key (403 otherwise, in keys mode; the keyless
loopback mode has one user) and happens at most once per :attr:`VacuumGate.interval` seconds per
server (429 with ``Retry-After`` otherwise, before anything is forgotten).
"""

from __future__ import annotations

import math
import threading

from starlette.exceptions import HTTPException

from ...foundation.clock import Clock
from .auth import Authenticator

__all__ = ["VacuumGate"]


class VacuumGate:
    """The admin and rate check of one server's vacuums."""

    def __init__(self, auth: Authenticator, clock: Clock, interval: float = 600.0) -> None:
        self.auth, self.clock, self.interval = auth, clock, interval
        self._last: float | None = None
        self._lock = threading.Lock()

    def admit(self, authorization: str | None) -> None:
        """Let one vacuum through, or refuse it (call from a worker thread: it may read a key).

        Raises:
            HTTPException: 403 for a key that is not an admin key (keys mode); 429 with
                ``Retry-After`` within ``interval`` of the last vacuum.
        """
        if self.auth.mode == "keys" and not self.auth.key(authorization).admin:
            raise HTTPException(403, "vacuum rebuilds every tenant's file: it takes an admin key")
        now = self.clock.now()
        with self._lock:
            if self._last is not None and now - self._last < self.interval:
                wait = max(1, math.ceil(self.interval - (now - self._last)))
                raise HTTPException(
                    429,
                    f"a vacuum ran less than {self.interval:g} s ago; retry in {wait} s",
                    {"Retry-After": str(wait)},
                )
            self._last = now
