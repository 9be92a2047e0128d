"""Feedback signals of one scope: what the user said about the assistant's answers.

The consolidation and preference passes show the last 7 days of them (at most 50) to the model
(spec 64, 68); ``correction`` signals are where anti-patterns come from (spec 71).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from ...engines import Engine
from ...foundation.errors import InvalidValue
from ...foundation.keyspace import check_subject, label_of, labelled, register
from ...foundation.limits import check_text
from ...foundation.timefmt import iso_utc
from ...tiers.longterm.validate import check_scope
from .keys import FEEDBACK_MAX, DreamKeys

__all__ = ["FEEDBACK_DAYS", "FEEDBACK_LIMIT", "FeedbackLog", "FeedbackSignal"]

FEEDBACK_DAYS: Final = 7
FEEDBACK_LIMIT: Final = 50


@dataclass(frozen=True, slots=True)
class FeedbackSignal:
    """One signal: its kind (``correction``, ``positive``, ``negative``…), text, time (epoch s)
    and the end user it is about (None: unlabelled)."""

    kind: str
    text: str
    timestamp: float
    subject: str | None = None

    def to_dict(self) -> dict[str, Any]:
        when = iso_utc(self.timestamp)
        return {"kind": self.kind, "text": self.text, "timestamp": when}


class FeedbackLog:
    """The feedback signals of one scope on one engine.

    Raises:
        InvalidKey: a bad scope.
    """

    def __init__(self, engine: Engine, scope: str) -> None:
        self.engine = engine
        self.scope = check_scope(scope)
        self.keys = DreamKeys.of(engine, self.scope)

    def add(self, kind: str, text: str, *, subject: str | None = None) -> FeedbackSignal:
        """Record a signal now; ``subject``: the end user it is about
        (:mod:`memstack.foundation.keyspace.subjects`).

        Raises:
            InvalidValue: an empty kind, blank text, text with lone surrogates, a bad subject.
        """
        if subject is not None:
            check_subject(subject)
        if not isinstance(kind, str) or not kind.strip():
            raise InvalidValue(f"feedback kind {kind!r}: must be a non-empty string")
        if not isinstance(text, str) or not text.strip():
            raise InvalidValue(f"feedback text {text!r}: must be a non-blank string")
        check_text(text, "feedback text")
        signal = FeedbackSignal(kind.strip().lower(), text.strip(), self.engine.clock.now(), subject)
        data = labelled({"k": signal.kind, "t": signal.text, "at": signal.timestamp}, subject)
        with self.engine.batch() as batch:
            register(self.engine, batch, subject, "feedback", self.scope)
            batch.rpush(self.keys.feedback, json.dumps(data, ensure_ascii=False))
            batch.ltrim(self.keys.feedback, -FEEDBACK_MAX, -1)
            batch.incr(self.keys.feedback_version)  # a forget rewriting the list sees it moved
        return signal

    def recent(self, days: float = FEEDBACK_DAYS, limit: int = FEEDBACK_LIMIT) -> list[FeedbackSignal]:
        """Signals of the last ``days`` days, the newest ``limit`` of them, oldest first."""
        since = self.engine.clock.now() - days * 86400
        signals = [
            FeedbackSignal(d["k"], d["t"], float(d["at"]), label_of(d))
            for d in (json.loads(r) for r in self.engine.lrange(self.keys.feedback, 0, -1))
        ]
        return [s for s in signals if s.timestamp >= since][-limit:]
