"""The history of a session: reading it, replacing it, and folding it into a cumulative summary.

A mixin of :class:`~memstack.tiers.session.store.SessionStore` on
:class:`~memstack.tiers.session.core.SessionCore`;
the summary itself is pure (:mod:`.summary`).
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable
from typing import Any

from ...foundation import limits
from ...foundation.errors import InvalidValue
from .core import SessionCore
from .requests import ReadHistory
from .summary import plan_summary
from .validate import encode_entry, encode_value

__all__ = ["SessionHistory"]


class SessionHistory(SessionCore):
    """``history``, ``replace_history`` and ``summarize_if_needed`` of a session store."""

    def history(self, session_id: str, limit: int = 50) -> builtins.list[dict[str, Any]]:
        """The last ``limit`` history entries, oldest first (``limit <= 0``: all).

        Raises:
            InvalidSessionId: malformed id.
            InvalidValue: ``limit`` is not an int of magnitude at most 2**53.
            SessionNotFound: unknown, deleted or expired session.
        """
        return self.recent(ReadHistory.of(session_id, limit))

    def recent(self, request: ReadHistory) -> builtins.list[dict[str, Any]]:
        """:meth:`history` with a request already checked (:meth:`ReadHistory.of`).

        Raises:
            SessionNotFound: unknown, deleted or expired session.
        """
        lay = self._layout(request.session_id)
        start = 0 if request.limit <= 0 else -request.limit
        (raws,) = self._read(request.session_id, lay, lambda b: b.lrange(lay.history, start, -1))
        return [json.loads(r) for r in raws]

    def replace_history(self, session_id: str, entries: Iterable[dict[str, Any]]) -> None:
        """Replace the whole history by ``entries`` (JSON objects), atomically.

        Raises:
            InvalidSessionId: malformed id.
            InvalidValue: an entry is not a JSON dict within the value limits (names ``entries[i]``).
            SessionNotFound: unknown, deleted or expired session (nothing is written).
        """
        lay = self._layout(session_id)
        raws = []
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise InvalidValue(
                    f"entries[{i}]: a history entry must be a dict, got {type(entry).__name__}"
                )
            raws.append(encode_value(entry, self.max_value_bytes, f"entries[{i}]"))
        batch = self.engine.batch()
        batch.require_exists(lay.meta)
        batch.incr(lay.generation)  # a summariser that read the old history must not trim this one
        batch.delete(lay.history)
        if raws:
            batch.rpush(lay.history, *raws)
        self._align(batch, lay, lay.generation, lay.history)
        if not batch.execute().applied:
            raise self._absent(session_id)

    def summarize_if_needed(self, session_id: str, max_entries: int | None = None) -> bool:
        """Fold old history into one cumulative summary when it is longer than ``max_entries``
        (default ``max_history``), keeping the newest ``max_entries // 2`` entries; True if it did.

        Entries appended concurrently are never lost: the folded prefix is trimmed with
        ``ltrim`` and the summary pushed in front in one batch, guarded by a generation key so
        two concurrent summarisers cannot both trim.

        Raises:
            InvalidSessionId: malformed id.
            InvalidValue: ``max_entries`` is not an int from 0 to 2**53.
            SessionNotFound: unknown, deleted or expired session.
        """
        limit = self.max_history if max_entries is None else limits.check_int(max_entries, "max_entries")
        lay = self._layout(session_id)
        for _ in range(8):
            generation, raws = self._read(
                session_id, lay, lambda b: (b.get(lay.generation), b.lrange(lay.history, 0, -1))
            )
            plan = plan_summary([json.loads(r) for r in raws], limit, self._now())
            if plan is None:
                return False
            batch = self.engine.batch()
            batch.require_exists(lay.meta)
            batch.require_equal(lay.generation, generation)
            batch.set(lay.generation, str(int(generation or 0) + 1))
            batch.ltrim(lay.history, plan.folded, -1)
            batch.lpush(lay.history, encode_entry(plan.entry))
            self._align(batch, lay, lay.generation, lay.history)
            if batch.execute().applied:
                return True
        return False  # others kept summarising: the history is being folded by them
