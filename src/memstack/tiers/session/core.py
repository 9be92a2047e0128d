"""The plumbing of the session tier: settings, key layouts, the guarded read, expiry upkeep.

:class:`SessionCore` is the base of :class:`~memstack.tiers.session.store.SessionStore`; every operation is
one atomic ``engine.batch()`` guarded by the session's meta key (one round trip on Redis).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any, Final

from ...engines.base import Batch, Engine
from ...foundation import limits
from ...foundation.errors import InvalidConfiguration, SessionNotFound
from ...foundation.limits import short_repr
from .layout import SESSIONS_KEY, Layout
from .validate import DEFAULT_MAX_VALUE_BYTES, check_session_id, encode_entry

__all__ = ["DEFAULT_MEMORY_SESSION_CAP", "SessionCore"]

DEFAULT_MEMORY_SESSION_CAP: Final = 1000
"""Live sessions the in-process (``memory``) engine holds by default (the seed's cap)."""
_LAYOUTS_KEPT: Final = 1024
"""Layouts of recently used sessions kept (validated id -> key names), then forgotten at once."""


class SessionCore:
    """The settings and plumbing of a :class:`~memstack.tiers.session.store.SessionStore` (its Args).

    Raises:
        InvalidConfiguration: see :class:`~memstack.tiers.session.store.SessionStore`.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        max_history: int = 100,
        auto_summarize: bool = True,
        session_ttl_hours: float = 0,
        max_sessions: int | None = None,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
    ) -> None:
        if isinstance(max_history, bool) or not isinstance(max_history, int) or max_history < 1:
            raise InvalidConfiguration(f"max_history {short_repr(max_history)}: must be an int >= 1")
        most_hours = limits.MAX_TTL_SECONDS // 3600
        if (
            isinstance(session_ttl_hours, bool)
            or not isinstance(session_ttl_hours, int | float)
            or not 0 <= session_ttl_hours <= most_hours
        ):
            raise InvalidConfiguration(
                f"session_ttl_hours {short_repr(session_ttl_hours)}: must be a number from 0 to {most_hours}"
            )
        if max_sessions is None:
            max_sessions = DEFAULT_MEMORY_SESSION_CAP if engine.name == "memory" else 0
        if not _is_int(max_sessions, 0):
            raise InvalidConfiguration(
                f"max_sessions {short_repr(max_sessions)}: must be an int >= 0 (0 = unlimited)"
            )
        if not _is_int(max_value_bytes, 1):
            raise InvalidConfiguration(f"max_value_bytes {short_repr(max_value_bytes)}: must be an int >= 1")
        self.engine = engine
        self.max_history = max_history
        self.auto_summarize = auto_summarize
        self.session_ttl_hours = float(session_ttl_hours)
        self.max_sessions = max_sessions
        self.max_value_bytes = max_value_bytes
        self._layouts: dict[str, Layout] = {}  # only ids that passed check_session_id

    # -- helpers -----------------------------------------------------------------------------
    def _layout(self, session_id: str) -> Layout:
        lay = self._layouts.get(session_id) if type(session_id) is str else None
        if lay is None:
            lay = Layout(self.engine.tag(check_session_id(session_id)))
            if len(self._layouts) >= _LAYOUTS_KEPT:
                self._layouts.clear()
            self._layouts[session_id] = lay
        return lay

    def _now(self) -> float:
        return self.engine.clock.now()

    def _log(self, batch: Batch, lay: Layout, entry: dict[str, Any]) -> None:
        batch.rpush(lay.history, encode_entry(entry))

    @staticmethod
    def _align(batch: Batch, lay: Layout, *keys: str) -> None:
        # A key created in a session with a TTL expires exactly with its meta.
        batch.copy_ttl(lay.meta, *keys)

    def _absent(self, session_id: str) -> SessionNotFound:
        """Forget a session whose meta is gone (expired or deleted) and build the error."""
        self._purge(session_id, self._layout(session_id))
        return SessionNotFound(f"Session {short_repr(session_id)} not found")

    def _purge(self, session_id: str, lay: Layout) -> None:
        if not self.engine.sismember(SESSIONS_KEY, session_id):
            return
        self.engine.srem(SESSIONS_KEY, session_id)
        # A concurrent create may have registered the id again before our srem; put it back.
        if self.engine.exists(lay.meta):
            self.engine.sadd(SESSIONS_KEY, session_id)

    def _read(self, session_id: str, lay: Layout, build: Any) -> builtins.list[Any]:
        """Run ``exists(meta)`` + the reads ``build(batch)`` queues; SessionNotFound if absent."""
        batch = self.engine.batch()
        batch.exists(lay.meta)
        build(batch)
        result = batch.execute()
        if not result[0]:
            raise self._absent(session_id)
        return result.results[1:]

    def _live(self, session_ids: Iterable[str]) -> builtins.list[tuple[str, bool]]:
        ids = sorted(session_ids)
        if not ids:
            return []
        if self.engine.clustered:  # metas of different sessions live in different slots
            return [(sid, self.engine.exists(self._layout(sid).meta)) for sid in ids]
        batch = self.engine.batch()
        for sid in ids:
            batch.exists(self._layout(sid).meta)
        return list(zip(ids, batch.execute().results, strict=True))


def _is_int(value: object, minimum: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and minimum <= value <= limits.MAX_COUNT
