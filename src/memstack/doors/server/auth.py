"""Who may call the service: the auth mode, fixed once at start-up, and the per-request check.

Two modes, decided by :func:`decide_mode` when the app is built and never changed afterwards:

* **keys**: every request (HTTP API and ``/mcp``) needs a valid bearer key. Chosen when asked
  for (``--auth keys``), when any key exists at start, or when the host is not loopback. Emptying,
  flushing or losing the key store later never opens the API: a missing key is a 401, a key store
  that cannot be read is a 503 with ``Retry-After``.
* **none**: no keys, tenant ``default`` unless ``X-Memstack-Tenant`` says otherwise; loopback only
  (``--no-auth`` on any other host is refused at start). Unless ``--no-auth`` asked for it, a keyless
  server looks for keys (at most once a second, on a request) and turns to keys mode for good once one
  exists: ``memstack keys create`` beside a running keyless server never leaves it open while the
  key's holder believes the API is closed (fail closed; no restart needed).

In keys mode a key with a rate (``memstack keys create --rate N``) gets 429 with ``Retry-After``
past N requests a minute, counted in the engine (:mod:`.rates`); failed authentications are
limited per client address by :mod:`.throttle`.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from typing import Final, Literal

from starlette.exceptions import HTTPException

from ...engines.prefixed import TENANT_RULE
from ...foundation.errors import EngineError, InvalidConfiguration
from ...foundation.keyspace import DEFAULT_TENANT
from .error_table import RETRY_AFTER_SECONDS
from .keys import ApiKey, ApiKeyStore
from .rates import KeyRates

__all__ = ["DEFAULT_TENANT", "AuthMode", "Authenticator", "decide_mode", "is_loopback"]

log = logging.getLogger("memstack.doors.server")

AuthMode = Literal["keys", "none"]
EMPTY_CHECK_SECONDS: Final = 5.0
"""Least time between two looks at whether the key store is empty (after a refused request)."""
KEYLESS_CHECK_SECONDS: Final = 1.0
"""Least time between two looks, by a keyless server, at whether a key has been created."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def decide_mode(keys: ApiKeyStore, asked: AuthMode | None, host: str) -> AuthMode:
    """The auth mode of a server on ``host``: ``asked`` when given, else keys when any key exists
    or the host is not loopback. A key store that cannot be read at start means keys (fail closed).

    Raises:
        InvalidConfiguration: ``none`` asked for on a host that is not loopback, or a mode that
            is neither ``keys`` nor ``none``.
    """
    if asked not in (None, "keys", "none"):
        raise InvalidConfiguration(f"auth mode {asked!r}: expected 'keys' or 'none'")
    if asked == "none":
        if not is_loopback(host):
            raise InvalidConfiguration(
                f"--no-auth on host {host!r}: running without API keys is only allowed on loopback "
                "(127.0.0.1, ::1, localhost)"
            )
        return "none"
    if asked == "keys" or not is_loopback(host):
        return "keys"
    try:
        return "keys" if keys.any() else "none"
    except EngineError:
        log.warning("cannot read the API key store at start: requiring API keys")
        return "keys"


def _unauthorized() -> HTTPException:
    return HTTPException(401, "a valid API key is required", headers={"WWW-Authenticate": "Bearer"})


def _unavailable() -> HTTPException:
    return HTTPException(
        503,
        "the API key store is unavailable; try again shortly",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def _over_rate(key: ApiKey, seconds: int) -> HTTPException:
    return HTTPException(
        429,
        f"API key {key.key_id} is over its rate of {key.rate} requests per minute; retry in {seconds} s",
        headers={"Retry-After": str(seconds)},
    )


class Authenticator:
    """The fixed auth mode of one app, and the check every request goes through."""

    def __init__(self, keys: ApiKeyStore, mode: AuthMode, *, follow_keys: bool = False) -> None:
        """``follow_keys``: a keyless server turns to keys mode once a key exists (the default
        keyless mode; ``--no-auth`` keeps it keyless)."""
        self.keys = keys
        self.rates = KeyRates(keys.engine)
        self._mode: AuthMode = mode
        self._follow_keys = follow_keys and mode == "none"
        self._lock = threading.Lock()
        self._next_check = 0.0
        self._next_key_check = 0.0
        self._empty: bool | None = None
        if mode == "keys":
            self._look_for_empty(force=True)

    @property
    def mode(self) -> AuthMode:
        """``keys`` or ``none``; a following keyless server turns to ``keys`` once a key exists."""
        if self._follow_keys:
            self._look_for_keys()
        return self._mode

    def _look_for_keys(self) -> None:
        now = self.keys.engine.clock.now()
        with self._lock:
            if now < self._next_key_check:
                return
            self._next_key_check = now + KEYLESS_CHECK_SECONDS
        try:
            found = self.keys.any()
        except EngineError:
            found = True  # a key store that cannot be read is never an open API
        if found:
            with self._lock:
                self._mode, self._follow_keys = "keys", False
            log.warning(
                "an API key exists now: this server requires API keys from here on "
                "(restart it to serve the key routes /v1/keys)"
            )

    def key(self, authorization: str | None) -> ApiKey:
        """The key of an ``Authorization: Bearer`` header (keys mode).

        Raises:
            HTTPException: 401 without a valid key; 429 (with ``Retry-After``) for a key over its
                rate; 503 when the key store cannot be read.
        """
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            self._look_for_empty()
            raise _unauthorized()
        try:
            found = self.keys.verify(token)
        except EngineError:
            raise _unavailable() from None
        if found is None:
            self._look_for_empty()
            raise _unauthorized()
        if found.rate is not None:
            try:
                wait = self.rates.take(found.key_id, found.rate)
            except EngineError:
                raise _unavailable() from None
            if wait:
                raise _over_rate(found, wait)
        return found

    def known(self, authorization: str | None) -> None:
        """Check that ``authorization`` names an existing key (keys mode), and nothing else: no
        rate is taken, so the route's own :meth:`key` still counts the request once.

        Raises:
            HTTPException: 401 without a valid key; 503 when the key store cannot be read.
        """
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _unauthorized()
        try:
            found = self.keys.verify(token.strip())
        except EngineError:
            raise _unavailable() from None
        if found is None:
            raise _unauthorized()

    def tenant(self, authorization: str | None, tenant_header: str | None) -> str:
        """The tenant a request acts for (the HTTP API and ``/mcp`` alike).

        Raises:
            HTTPException: 401/429/503 as :meth:`key`; 404 for a tenant the key may not use (never
                403, which would confirm that the tenant exists) or a malformed tenant name.
        """
        if self.mode == "keys":
            found = self.key(authorization)
            tenant = tenant_header or found.tenants[0]
            if tenant not in found.tenants:
                raise HTTPException(404, f"tenant {tenant!r} not found")
            return tenant
        tenant = tenant_header or DEFAULT_TENANT
        if TENANT_RULE.fullmatch(tenant) is None:
            raise HTTPException(404, f"tenant {tenant!r} not found")
        return tenant

    def _look_for_empty(self, *, force: bool = False) -> None:
        # Refused requests are when an emptied store matters; a look every few seconds at most
        # keeps a flood of bad requests from becoming a flood of engine reads.
        now = time.monotonic()
        with self._lock:
            if not force:
                if now < self._next_check:
                    return
                self._next_check = now + EMPTY_CHECK_SECONDS
        try:
            empty = not self.keys.any()
        except EngineError:
            return
        with self._lock:
            was, self._empty = self._empty, empty
        if empty and was is not True:
            log.warning(
                "the API key store is empty: every request is refused until a key is created "
                "(memstack keys create --tenant NAME)"
            )
