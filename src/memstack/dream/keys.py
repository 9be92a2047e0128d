"""Key layout of the dream tier. Every key embeds the scope's tag, the same one as the long-term
keys of the scope (``lt:{scope}:…``), so a pass's changes, its record and its archive are ONE
atomic batch, also on Redis Cluster.

| key | type | holds |
|---|---|---|
| ``dream:{scope}:rec:{id}`` | string | a record's JSON (its retired entries: the archive); TTL = retention |
| ``dream:{scope}:recs`` | sorted set | record id → time (the history) |
| ``dream:{scope}:fb`` | list | feedback signals (JSON), the last :data:`FEEDBACK_MAX` |
| ``dream:{scope}:lease`` | string | the token of the process running a pass now (TTL) |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..engines import Engine

__all__ = ["FEEDBACK_MAX", "PREFIX", "DreamKeys"]

PREFIX: Final = "dream:"
FEEDBACK_MAX: Final = 1000
"""Feedback signals kept per scope (older ones dropped)."""


@dataclass(frozen=True, slots=True)
class DreamKeys:
    """The dream keys of one scope on one engine."""

    base: str

    @classmethod
    def of(cls, engine: Engine, scope: str) -> DreamKeys:
        return cls(f"{PREFIX}{engine.tag(scope)}:")

    def record(self, record_id: str) -> str:
        return f"{self.base}rec:{record_id}"

    @property
    def records(self) -> str:
        return f"{self.base}recs"

    @property
    def feedback(self) -> str:
        return f"{self.base}fb"

    @property
    def lease(self) -> str:
        return f"{self.base}lease"
