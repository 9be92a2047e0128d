"""Delta injection: each long-term memory is injected at most once per session.

The record lives in the engine (one set per session), so it holds across workers and restarts;
``try_mark`` is one ``sadd``, which returns 1 only to the first caller, whichever process it is.
Memory ids are compared case-insensitively, the store's rule (``ABC`` and ``abc`` are one memory).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...engines import Engine
from ...foundation.limits import check_ttl
from .layout import injected_key
from .validate import check_session_id, normalise_id

__all__ = ["InjectionTracker"]


class InjectionTracker:
    """Which memories each session has already seen.

    Args:
        engine: the storage engine.
        ttl: optional lifetime in seconds of a session's record, renewed by every mark (None: forever).

    Raises:
        InvalidValue: a ``ttl`` that is not a number of seconds greater than 0 and at most ten years.
    """

    def __init__(self, engine: Engine, *, ttl: float | None = None) -> None:
        self.engine = engine
        self.ttl_ms = None if ttl is None else max(1, int(check_ttl(ttl, "ttl") * 1000))

    def try_mark(self, session_id: str, memory_id: str) -> bool:
        """True only the first time ``memory_id`` is marked in ``session_id`` (atomic across workers).

        Raises:
            InvalidSessionId: a malformed session id.
            InvalidKey: a malformed memory id.
        """
        key = injected_key(self.engine, check_session_id(session_id))
        batch = self.engine.batch()
        batch.sadd(key, normalise_id(memory_id))
        if self.ttl_ms is not None:
            batch.pexpire(key, self.ttl_ms)
        return bool(batch.execute()[0])

    def try_mark_many(self, session_id: str, memory_ids: Sequence[str]) -> list[bool]:
        """:meth:`try_mark` for several ids in one atomic batch (one round trip), in order.

        Raises:
            InvalidSessionId: a malformed session id.
            InvalidKey: a malformed memory id.
        """
        key = injected_key(self.engine, check_session_id(session_id))
        ids = [normalise_id(memory_id) for memory_id in memory_ids]
        if not ids:
            return []
        batch = self.engine.batch()
        for memory_id in ids:
            batch.sadd(key, memory_id)
        if self.ttl_ms is not None:
            batch.pexpire(key, self.ttl_ms)
        results = batch.execute().results
        return [bool(results[i]) for i in range(len(ids))]

    def was_injected(self, session_id: str, memory_id: str) -> bool:
        """True if ``memory_id`` was marked in ``session_id``.

        Raises:
            InvalidSessionId: a malformed session id.
            InvalidKey: a malformed memory id.
        """
        key = injected_key(self.engine, check_session_id(session_id))
        return self.engine.sismember(key, normalise_id(memory_id))

    def clear(self, session_id: str) -> None:
        """Forget what ``session_id`` saw; an unknown session is a no-op.

        Raises:
            InvalidSessionId: a malformed session id.
        """
        self.engine.delete(injected_key(self.engine, check_session_id(session_id)))
