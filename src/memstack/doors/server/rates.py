"""Per-key request rates (``memstack keys create --rate N``), counted in the engine.

The counters live in the storage engine, not in a process, so every worker and every server on
one engine shares them: a key's rate holds across all of them. Each key counts its requests per
minute in one engine counter per minute (``auth:rate:{key id}:{minute}``, expiring after two
minutes); a request is allowed while the sliding estimate

    requests of the previous minute x (share of the window still ahead) + requests of this minute

stays within the key's rate. A refused request is taken back out of the count, so a client that
sends faster than its rate still gets its rate, not nothing. One engine batch (increment, expiry,
read of the previous minute) per request of a key with a rate; keys without one cost nothing.
Time is the engine's clock.
"""

from __future__ import annotations

import math
from typing import Final

from ...engines import Engine
from ...foundation.keyspace import family_named

__all__ = ["MAX_RATE", "WINDOW_SECONDS", "KeyRates", "rate_key"]

WINDOW_SECONDS: Final = 60
"""The counting window: rates are requests per minute."""
MAX_RATE: Final = 10**9
"""Largest rate a key may have (requests per minute)."""
_COUNTER: Final = family_named("auth.rate")


def rate_key(engine: Engine, key_id: str, window: int) -> str:
    """The counter of ``key_id`` for window number ``window`` (both windows of a key share a slot:
    the key id is the family's scope part, a hash tag on clustered engines)."""
    return _COUNTER.key(engine.tag, key_id=key_id, minute=str(window))


class KeyRates:
    """Take one request from a key's per-minute rate, on ``engine``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def take(self, key_id: str, per_minute: int) -> int:
        """Count one request of ``key_id``; 0 when it is within ``per_minute``, else the whole
        seconds after which to try again (the request is then not counted).

        Raises:
            EngineUnavailable: the engine cannot be reached (the caller must refuse the request).
        """
        now = self.engine.clock.now()
        window = int(now // WINDOW_SECONDS)
        ahead = 1.0 - (now - window * WINDOW_SECONDS) / WINDOW_SECONDS
        current, previous = rate_key(self.engine, key_id, window), rate_key(self.engine, key_id, window - 1)
        batch = self.engine.batch()
        batch.incr(current, 1)
        batch.pexpire(current, 2 * WINDOW_SECONDS * 1000)
        batch.get(previous)
        counted, _, before = batch.execute().results
        earlier = int(before) if before is not None else 0
        if earlier * ahead + counted <= per_minute:
            return 0
        self.engine.incr(current, -1)
        return _retry_after(earlier, int(counted), ahead, per_minute)


def _retry_after(earlier: int, counted: int, ahead: float, per_minute: int) -> int:
    """Seconds until the estimate has room for one more request (at most one window)."""
    if earlier > 0:
        # earlier x (ahead - t/W) + counted <= per_minute, within this window
        wait = (ahead - (per_minute - counted) / earlier) * WINDOW_SECONDS
        if wait <= ahead * WINDOW_SECONDS:
            return max(1, math.ceil(wait))
    # The next window starts with this one's count as its "previous" share.
    share = max(0.0, 1.0 - (per_minute - 1) / counted) if counted else 0.0
    return max(1, min(WINDOW_SECONDS, math.ceil((ahead + share) * WINDOW_SECONDS)))
