"""``PersistentMemoryStore``: the seed's facade and result dictionaries over :class:`SessionStore`.

For users of the RocketRide node: same constructor, same methods, same ``{'ok': ...}`` results.
Differences, as DESIGN §6 decides: ids and keys are full-string matched; an expired session
answers ``not found`` on every method and backend; increments are logged as ``increment``;
summaries are cumulative; ``clear`` history carries ``cleared`` everywhere. Malformed ids and
keys raise (``ValueError`` subclasses) like the seed; a non-numeric increment raises
:class:`~memstack.foundation.errors.NotANumber` (a ``TypeError``).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

from ...engines import Engine, default_sqlite_url, default_url, open_engine
from ...foundation.clock import Clock
from ...foundation.errors import (
    InvalidConfiguration,
    MemstackError,
    SessionExists,
    SessionLimitReached,
    SessionNotFound,
)
from ...foundation.limits import short_repr
from ...tiers.session.store import SessionStore

__all__ = ["BACKENDS", "PersistentMemoryStore", "engine_url"]

log = logging.getLogger(__name__)

BACKENDS = ("memory", "sqlite", "redis", "postgres")

Result = dict[str, Any]


def engine_url(
    backend: str,
    *,
    url: str | None = None,
    redis_host: str = "localhost",
    redis_port: int = 6379,
    redis_password: str | None = None,
) -> str:
    """The engine URL a seed-style backend choice means (``url`` wins when given).

    Raises:
        InvalidConfiguration: unknown backend, Redis with an empty host, PostgreSQL without ``url``.
    """
    if backend not in BACKENDS:
        raise InvalidConfiguration(
            f'Unknown backend: {short_repr(backend)}. Must be "redis", "sqlite", "postgres" or "memory".'
        )
    if url:
        return url
    if backend == "postgres":
        raise InvalidConfiguration("the postgres backend has no default server: pass url='postgresql://…'")
    if backend == "memory":
        return "memory://"
    if backend == "sqlite":
        found = default_url()
        # $MEMSTACK_URL may name another engine; the sqlite backend then uses the data directory.
        return found if found.startswith("sqlite:") else default_sqlite_url()
    if not redis_host:
        raise InvalidConfiguration("redis_host is empty: set the Redis server's host name (profile 'custom')")
    auth = f":{quote(redis_password, safe='')}@" if redis_password else ""
    return f"redis://{auth}{redis_host}:{int(redis_port)}/0"


class PersistentMemoryStore:
    """The seed's ``PersistentMemoryStore`` on a memstack engine.

    Args:
        backend: ``memory``, ``sqlite``, ``redis`` or ``postgres`` (which needs ``url``).
        url: engine URL (overrides the backend's default location and the ``redis_*`` fields).
        max_history, auto_summarize, session_ttl_hours: as :class:`SessionStore`.
        redis_host, redis_port, redis_password: where the Redis backend connects.
        clock: time source (tests pass a ``ManualClock``).

    Raises:
        InvalidConfiguration: unknown backend (message starts ``Unknown backend``).
        EngineUnavailable: the engine cannot be reached.
    """

    def __init__(
        self,
        backend: str = "memory",
        *,
        url: str | None = None,
        max_history: int = 100,
        auto_summarize: bool = True,
        redis_host: str = "localhost",
        redis_port: int = 6379,
        redis_password: str | None = None,
        session_ttl_hours: float = 0,
        clock: Clock | None = None,
    ) -> None:
        target = engine_url(
            backend, url=url, redis_host=redis_host, redis_port=redis_port, redis_password=redis_password
        )
        self.max_history = max_history
        self.auto_summarize = auto_summarize
        self.ttl_seconds: float | None = session_ttl_hours * 3600 if session_ttl_hours > 0 else None
        engine = open_engine(target, clock=clock)
        try:
            self.sessions = SessionStore(
                engine, max_history=max_history, auto_summarize=auto_summarize, session_ttl_hours=0
            )
        except BaseException:
            engine.close()
            raise

    @property
    def backend(self) -> Engine:
        """The engine (has ``close()``)."""
        return self.sessions.engine

    # -- sessions ----------------------------------------------------------------------------
    def create_session(self, session_id: str) -> Result:
        """Create a session with the store-wide TTL."""
        try:
            self.sessions._create(session_id, self.ttl_seconds)
        except (SessionExists, SessionLimitReached) as exc:
            return _failed(exc)
        return {"ok": True, "session_id": session_id}

    def resume_session(self, session_id: str) -> Result:
        """``key_count`` of a live session."""
        return self._call(lambda: {"key_count": self.sessions.resume(session_id)}, session_id)

    def list_sessions(self) -> list[str]:
        """Live session ids, sorted."""
        return self.sessions.list()

    def delete_session(self, session_id: str) -> Result:
        """Delete a session; ``keys_cleared`` lists its keys."""
        return self._call(lambda: {"keys_cleared": self.sessions.delete(session_id)}, session_id)

    # -- keys --------------------------------------------------------------------------------
    def put(self, session_id: str, key: str, value: Any) -> Result:
        """Store a value (auto-summarises past ``max_history``)."""

        def run() -> Result:
            self.sessions.put(session_id, key, value)
            return {"key": key}

        return self._call(run, session_id)

    def get(self, session_id: str, key: str) -> Result:
        """``value`` of a key; a missing key gives ``ok False`` and ``value None`` without ``error``."""
        missing = object()

        def run() -> Result:
            value = self.sessions.get(session_id, key, missing)
            if value is missing:
                return {"ok": False, "key": key, "value": None}
            return {"key": key, "value": value}

        return self._call(run, session_id)

    def list_keys(self, session_id: str) -> Result:
        """``keys`` of a session, sorted."""
        return self._call(lambda: {"keys": self.sessions.keys(session_id)}, session_id)

    def clear(self, session_id: str, key: str | None = None) -> Result:
        """Remove one key or all; ``cleared`` lists what went."""
        return self._call(lambda: {"cleared": self.sessions.clear(session_id, key)}, session_id)

    def increment(self, session_id: str, key: str, amount: int | float = 1) -> Result:
        """Atomic add; ``value`` is the new number."""

        def run() -> Result:
            return {"key": key, "value": self.sessions.increment(session_id, key, amount)}

        return self._call(run, session_id)

    def get_history(self, session_id: str, limit: int = 50) -> Result:
        """The last ``limit`` history ``entries`` (all when ``limit <= 0``)."""
        return self._call(lambda: {"entries": self.sessions.history(session_id, limit)}, session_id)

    def replace_history(self, session_id: str, entries: list[dict[str, Any]]) -> None:
        """Replace the history; a silent no-op for an unknown or expired session."""
        try:
            self.sessions.replace_history(session_id, entries)
        except SessionNotFound:
            return

    def summarize_if_needed(self, session_id: str, max_entries: int) -> bool:
        """Fold old history when longer than ``max_entries``; False for an absent session."""
        try:
            return self.sessions.summarize_if_needed(session_id, max_entries)
        except SessionNotFound:
            return False

    def close(self) -> None:
        """Close the engine; a failure is logged at DEBUG, never raised (like the seed)."""
        try:
            self.backend.close()
        except Exception as exc:  # the seed's close() swallows every failure
            log.debug("PersistentMemoryStore.close failed: %s", exc)

    def _call(self, run: Any, session_id: str) -> Result:
        try:
            body: Result = run()
        except SessionNotFound as exc:
            return _failed(exc)
        ok = body.pop("ok", True)
        return {"ok": ok, "session_id": session_id, **body}


def _failed(exc: MemstackError) -> Result:
    return {"ok": False, "error": str(exc)}
