"""Failed authentications, limited per client address: a token bucket per address.

Each address may fail :attr:`AuthThrottle.burst` times in a row; its allowance then comes back
at :attr:`AuthThrottle.per_minute` failures a minute. An address with no allowance left gets
``429 Too Many Requests`` with ``Retry-After`` on every request that needs a key, before its key
is even looked at (otherwise a guesser would still learn which key is right), until enough
allowance has come back. Its first refusal is logged once (with the address, never the presented
token); health, readiness, the API documents and the inspector's static files stay open.

The buckets live in the process: a failed guess costs no engine round trip, and a flood of them
never reaches the engine. ``memstack serve`` runs one process, so the limit is per server. An IPv6
client counts by its /64 network (one host usually holds a whole /64). Behind a reverse proxy the
address is the one uvicorn reads from ``X-Forwarded-For`` only for the proxies named by
``memstack serve --forwarded-allow-ips`` (none by default, not even loopback: otherwise any local
process could name a fresh address with every guess).

The keyless loopback mode has no keys to guess and no throttle.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ...foundation.clock import Clock
from ...foundation.errors import InvalidConfiguration
from .defaults import AUTH_FAILURE_BURST, AUTH_FAILURE_RATE

__all__ = [
    "PUBLIC_PATHS",
    "AuthThrottle",
    "FailureThrottle",
    "client_of",
    "is_public",
]

log = logging.getLogger("memstack.doors.server")

MAX_CLIENTS: Final = 100_000
"""Most addresses remembered at once (the least recently failed one is forgotten first)."""
PUBLIC_PATHS: Final = (
    "/healthz",
    "/readyz",
    "/openapi.json",
    "/docs",
    "/redoc",
    "/docs-assets/",
    "/ui/static/",
)
"""Paths that take no key: never throttled (``/ui`` and ``/ui/`` too)."""


@dataclass(frozen=True, slots=True)
class AuthThrottle:
    """How many failed authentications one client address may make.

    Attributes:
        burst: failures allowed in a row (0 turns the throttle off).
        per_minute: failures forgiven per minute once the burst is spent.

    Their defaults and environment variables are the ``auth_failure_*`` rows of
    :mod:`memstack.doors.server.defaults`.
    """

    burst: int = AUTH_FAILURE_BURST.default
    per_minute: float = AUTH_FAILURE_RATE.default

    def __post_init__(self) -> None:
        if isinstance(self.burst, bool) or not isinstance(self.burst, int) or not 0 <= self.burst <= 10**6:
            raise InvalidConfiguration(f"auth failure burst {self.burst!r}: must be an int from 0 to 10**6")
        rate = self.per_minute
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 10**6:
            raise InvalidConfiguration(
                f"auth failure rate {rate!r}: must be a number of failures per minute above 0, at most 10**6"
            )

    @classmethod
    def from_env(
        cls,
        burst: int | None = None,
        per_minute: float | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> AuthThrottle:
        """The throttle of explicit values, else ``$MEMSTACK_AUTH_FAILURE_BURST`` and
        ``$MEMSTACK_AUTH_FAILURE_RATE``, else the defaults.

        Raises:
            InvalidConfiguration: a value that is not a number in range (names the variable).
        """
        env = os.environ if environ is None else environ
        return cls(AUTH_FAILURE_BURST.resolve(burst, env), AUTH_FAILURE_RATE.resolve(per_minute, env))


def client_of(address: str) -> str:
    """The throttled identity of a client address: IPv4 as it is, IPv6 by its /64 network."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class FailureThrottle:
    """The token buckets of one server (thread-safe); time comes from ``clock``."""

    def __init__(self, settings: AuthThrottle, clock: Clock, *, max_clients: int = MAX_CLIENTS) -> None:
        self.settings = settings
        self.clock = clock
        self._refill = settings.per_minute / 60.0
        self._max = max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tokens, at)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        """False when the burst is 0 (throttle off)."""
        return self.settings.burst > 0

    def _level(self, client: str, now: float) -> float:
        """The allowance of ``client`` now (the lock is held)."""
        found = self._buckets.get(client)
        if found is None:
            return float(self.settings.burst)
        tokens, at = found
        return min(float(self.settings.burst), tokens + max(0.0, now - at) * self._refill)

    def retry_after(self, client: str) -> int:
        """Whole seconds until ``client`` may try again; 0 when it may now."""
        if not self.enabled:
            return 0
        with self._lock:
            level = self._level(client, self.clock.now())
        if level >= 1.0:
            return 0
        return max(1, math.ceil((1.0 - level) / self._refill))

    def failed(self, client: str) -> bool:
        """Spend one failure of ``client``'s allowance; True when this spent its last one."""
        if not self.enabled:
            return False
        now = self.clock.now()
        with self._lock:
            level = max(0.0, self._level(client, now) - 1.0)
            self._buckets[client] = (level, now)
            self._buckets.move_to_end(client)
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
        return level < 1.0

    def __len__(self) -> int:
        return len(self._buckets)


def is_public(path: str) -> bool:
    """True for paths that take no key (see :data:`PUBLIC_PATHS`)."""
    return path in ("/ui", "/ui/") or path.startswith(PUBLIC_PATHS)
