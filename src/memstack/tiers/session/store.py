"""``SessionStore``: a key-value map per session id, with history, counters and a whole-session TTL.

Every operation is one atomic ``engine.batch()`` guarded by the session's meta key (one round
trip on Redis); reads that decide a write (clear, delete, summarise) take one read batch first.
The key layout is RocketRide's node's (:mod:`.layout`); summarisation is pure (:mod:`.summary`).
"""

from __future__ import annotations

import builtins
import logging
from typing import Any, Final

from ...foundation.errors import EntryNotFound, NotANumber, SessionExists, SessionLimitReached
from ...foundation.keyspace import register
from ...foundation.limits import short_repr
from .core import DEFAULT_MEMORY_SESSION_CAP
from .history_ops import SessionHistory
from .layout import SESSIONS_KEY, Layout
from .requests import CreateSession, Increment, PutValue
from .validate import check_key, decode_value, encode_value, put_entry, ttl_ms

__all__ = ["DEFAULT_MEMORY_SESSION_CAP", "SessionStore"]

log = logging.getLogger(__name__)

_MISSING: Final = object()
_PUSHED: Final = 3
"""Index of the history ``rpush`` (its result is the new history length) in put/increment batches."""


class SessionStore(SessionHistory):
    """Session state on one engine.

    Args:
        engine: the storage engine.
        max_history: history length past which :meth:`summarize_if_needed` folds old entries.
        auto_summarize: run :meth:`summarize_if_needed` after every put and increment.
        session_ttl_hours: default whole-session TTL of :meth:`create` (0 = never expires;
            fractional hours allowed, rounded up to whole milliseconds ``max(1, ceil(ttl*1000))``).
            A session created at ``c`` with TTL ``t`` is live at exactly ``c + t`` and gone 1 ms later.
        max_sessions: most live sessions; ``None`` means 1000 on the ``memory`` engine and
            unlimited elsewhere, ``0`` means unlimited. Checked before each create, so creates
            racing each other may overshoot it by the number of racers.
        max_value_bytes: largest JSON encoding of one value (default 1 MiB).

    Raises:
        InvalidConfiguration: ``max_history < 1``, a TTL that is negative or over ten years, a cap
            or size that is not an int in range.
    """

    # -- sessions ----------------------------------------------------------------------------
    def create(self, session_id: str, *, ttl_hours: float | None = None, subject: str | None = None) -> None:
        """Create an empty session; ``ttl_hours`` overrides the store's default (0 = no TTL);
        ``subject``: the end user it is about (:mod:`memstack.foundation.keyspace.subjects`).

        Raises:
            InvalidSessionId: malformed id.
            InvalidValue: a TTL that is not a number, negative, not finite or over ten years.
            SessionExists: the session is live.
            SessionLimitReached: ``max_sessions`` live sessions exist already.
            InvalidValue: a malformed subject.
        """
        self.start(CreateSession.of(session_id, ttl_hours=ttl_hours, subject=subject))

    def start(self, request: CreateSession) -> None:
        """:meth:`create` with a request already checked (:meth:`CreateSession.of`).

        Raises:
            SessionExists, SessionLimitReached: as :meth:`create` says.
        """
        hours = self.session_ttl_hours if request.ttl_hours is None else request.ttl_hours
        if isinstance(hours, float) and hours.is_integer():
            hours = int(hours)  # meta says "86400" for 24 h, like RocketRide's node
        self._create(request.session_id, hours * 3600 if hours else None, request.subject)

    def _create(self, session_id: str, ttl_seconds: float | None, subject: str | None = None) -> None:
        lay = self._layout(session_id)
        ms = ttl_ms(ttl_seconds)
        stale, live = self._read_stale(lay)
        if live:
            raise SessionExists(f"Session {short_repr(session_id)} already exists")
        if self.max_sessions and len(self.list()) >= self.max_sessions:
            raise SessionLimitReached(f"Maximum sessions ({self.max_sessions}) reached")
        if self.engine.clustered:  # __sessions__ is in another slot: register first, crash-safe
            self.engine.sadd(SESSIONS_KEY, session_id)
        batch = self.engine.batch()
        batch.require_missing(lay.meta)
        register(self.engine, batch, subject, "session", session_id)
        # Leftovers of a session that died between the two calls of delete() go first.
        batch.delete(*lay.structural(), *(lay.data(k) for k in stale))
        batch.hset(lay.meta, {"created_at": str(self._now()), "ttl_seconds": str(ttl_seconds)})
        if ms is not None:
            # RocketRide's boundary: expired only when now > created + ttl, so live at exactly created + ttl;
            # the seam's keys die at now >= expire-at, hence the extra millisecond.
            batch.pexpire(lay.meta, ms + 1)
        if not self.engine.clustered:
            batch.sadd(SESSIONS_KEY, session_id)
        if not batch.execute().applied:
            raise SessionExists(f"Session {short_repr(session_id)} already exists")
        if self.engine.clustered:  # a concurrent purge may have dropped the id meanwhile
            self.engine.sadd(SESSIONS_KEY, session_id)

    def _read_stale(self, lay: Layout) -> tuple[set[str], bool]:
        batch = self.engine.batch()
        batch.smembers(lay.keys)
        batch.exists(lay.meta)
        result = batch.execute()
        return result[0], bool(result[1])

    def resume(self, session_id: str) -> int:
        """The number of keys of a live session.

        Raises:
            InvalidSessionId: malformed id.
            SessionNotFound: unknown, deleted or expired session.
        """
        lay = self._layout(session_id)
        (count,) = self._read(session_id, lay, lambda b: b.scard(lay.keys))
        return int(count)

    def exists(self, session_id: str) -> bool:
        """True if the session is live.

        Raises:
            InvalidSessionId: malformed id.
        """
        return bool(self.engine.exists(self._layout(session_id).meta))

    def delete(self, session_id: str) -> builtins.list[str]:
        """Delete a session and everything in it; returns its keys, sorted.

        Raises:
            InvalidSessionId: malformed id.
            SessionNotFound: unknown, deleted or expired session.
        """
        lay = self._layout(session_id)
        batch = self.engine.batch()
        batch.require_exists(lay.meta)
        batch.smembers(lay.keys)
        batch.delete(lay.meta)  # from here on every write to the session fails its guard
        result = batch.execute()
        if not result.applied:
            raise self._absent(session_id)
        keys: set[str] = result[1]
        cleanup = self.engine.batch()
        cleanup.require_missing(lay.meta)  # skip if the id was re-created meanwhile
        cleanup.delete(*lay.structural(), *(lay.data(k) for k in keys))
        cleanup.execute()
        self._purge(session_id, lay)
        return sorted(keys)

    def list(self) -> builtins.list[str]:
        """Ids of the live sessions, sorted (a read: expired ids are skipped, never removed here;
        :meth:`prune` removes them).

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """
        return [sid for sid, alive in self._live(self.engine.smembers(SESSIONS_KEY)) if alive]

    def prune(self) -> int:
        """Drop the ids of expired sessions from the registry; returns how many went (a write,
        run by the retention sweep: reads never write).

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """
        dead = [sid for sid, alive in self._live(self.engine.smembers(SESSIONS_KEY)) if not alive]
        for sid in dead:
            self._purge(sid, self._layout(sid))
        return len(dead)

    # -- keys --------------------------------------------------------------------------------
    def put(self, session_id: str, key: str, value: Any) -> None:
        """Store ``value`` (JSON) under ``key``; logs ``{'op': 'put'}``.

        Raises:
            InvalidSessionId, InvalidKey: malformed id or key.
            InvalidValue: not JSON (see :mod:`memstack.foundation.limits`: lone surrogates, NaN, nesting
                deeper than 100...) or larger than ``max_value_bytes``; names ``value`` and the part.
            SessionNotFound: unknown, deleted or expired session.
        """
        self.write(PutValue.of(session_id, key, value))

    def write(self, request: PutValue) -> None:
        """:meth:`put` with a request already checked (:meth:`PutValue.of`); the value is checked
        here, where it is encoded (its size limit is this store's).

        Raises:
            InvalidValue, SessionNotFound: as :meth:`put` says.
        """
        session_id, key = request.session_id, request.key
        lay = self._layout(session_id)
        raw = encode_value(request.value, self.max_value_bytes)
        batch = self.engine.batch()
        batch.require_exists(lay.meta)
        batch.set(lay.data(key), raw)
        batch.sadd(lay.keys, key)
        batch.rpush(lay.history, put_entry(key, self._now()))
        self._align(batch, lay, lay.data(key), lay.keys, lay.history)
        result = batch.execute()
        if not result.applied:
            raise self._absent(session_id)
        self._after_write(session_id, result[_PUSHED])

    def increment(self, session_id: str, key: str, amount: int | float = 1) -> int | float:
        """Atomically add ``amount`` to the number at ``key`` (missing = 0); returns the new value.

        Logged as ``{'op': 'increment', 'key', 'amount'}``. Ints stay ints; a float amount
        makes a float.

        Raises:
            InvalidSessionId, InvalidKey: malformed id or key.
            InvalidValue: ``amount`` is not a finite int or float of magnitude at most 2**63-1.
            NotANumber: the stored value is not a JSON number (nothing is changed); the message
                names the key and the session.
            SessionNotFound: unknown, deleted or expired session.
        """
        return self.add(Increment.of(session_id, key, amount))

    def add(self, request: Increment) -> int | float:
        """:meth:`increment` with a request already checked (:meth:`Increment.of`).

        Raises:
            NotANumber, SessionNotFound: as :meth:`increment` says.
        """
        session_id, key, amount = request.session_id, request.key, request.amount
        lay = self._layout(session_id)
        batch = self.engine.batch()
        batch.require_exists(lay.meta)
        batch.incr(lay.data(key), amount)
        batch.sadd(lay.keys, key)
        entry = {"op": "increment", "key": key, "amount": amount, "timestamp": self._now()}
        self._log(batch, lay, entry)
        self._align(batch, lay, lay.data(key), lay.keys, lay.history)
        try:
            result = batch.execute()
        except NotANumber as exc:  # the engine's message names its storage key: say the caller's ids
            why = str(exc).split("': ", 1)[-1]
            raise NotANumber(
                f"cannot increment key {short_repr(key)} of session {short_repr(session_id)}: {why}"
            ) from exc
        if not result.applied:
            raise self._absent(session_id)
        self._after_write(session_id, result[_PUSHED])
        value: int | float = result[1]
        return value

    def _after_write(self, session_id: str, history_length: int) -> None:
        if self.auto_summarize and history_length > self.max_history:
            self.summarize_if_needed(session_id)

    def get(self, session_id: str, key: str, default: Any = _MISSING) -> Any:
        """The value at ``key`` (a fresh copy), or ``default`` when given and the key is missing.

        Raises:
            InvalidSessionId, InvalidKey: malformed id or key.
            SessionNotFound: unknown, deleted or expired session.
            EntryNotFound: the key is missing and no default was given.
        """
        lay = self._layout(session_id)
        check_key(key)
        (raw,) = self._read(session_id, lay, lambda b: b.get(lay.data(key)))
        if raw is None:
            if default is _MISSING:
                raise EntryNotFound(f"Key {short_repr(key)} not found in session {short_repr(session_id)}")
            return default
        return decode_value(raw)

    def items(self, session_id: str) -> dict[str, Any]:
        """Every key of the session with its value, keys sorted.

        Raises:
            InvalidSessionId: malformed id.
            SessionNotFound: unknown, deleted or expired session.
        """
        keys = self.keys(session_id)
        if not keys:
            return {}
        lay = self._layout(session_id)
        raws = self._read(session_id, lay, lambda b: b.mget([lay.data(k) for k in keys]))[0]
        return {k: decode_value(r) for k, r in zip(keys, raws, strict=True) if r is not None}

    def keys(self, session_id: str) -> builtins.list[str]:
        """The session's keys, sorted.

        Raises:
            InvalidSessionId: malformed id.
            SessionNotFound: unknown, deleted or expired session.
        """
        return self._sorted_keys(session_id, self._layout(session_id))

    def _sorted_keys(self, session_id: str, lay: Layout) -> builtins.list[str]:
        (members,) = self._read(session_id, lay, lambda b: b.smembers(lay.keys))
        return sorted(members)

    def clear(self, session_id: str, key: str | None = None) -> builtins.list[str]:
        """Remove ``key`` (or every key when None); returns the keys removed, sorted.

        Always logs ``{'op': 'clear', 'key', 'cleared'}``, even when nothing was removed.

        Raises:
            InvalidSessionId, InvalidKey: malformed id or key.
            SessionNotFound: unknown, deleted or expired session.
        """
        lay = self._layout(session_id)
        if key is not None:
            check_key(key)
            (present,) = self._read(session_id, lay, lambda b: b.sismember(lay.keys, key))
            cleared = [key] if present else []
        else:
            cleared = self._sorted_keys(session_id, lay)
        batch = self.engine.batch()
        batch.require_exists(lay.meta)
        if key is not None:
            batch.srem(lay.keys, key)
            batch.delete(lay.data(key))
        elif cleared:
            # srem of exactly these members: a key put concurrently stays consistent.
            batch.srem(lay.keys, *cleared)
            batch.delete(*(lay.data(k) for k in cleared))
        self._log(batch, lay, {"op": "clear", "key": key, "cleared": cleared, "timestamp": self._now()})
        self._align(batch, lay, lay.history)
        if not batch.execute().applied:
            raise self._absent(session_id)
        return cleared
