"""Key layout of the dream tier, from the keyspace registry. Every key embeds the scope's tag, the
same one as the long-term keys of the scope (``lt:{scope}:…``), so a pass's changes, its record and
its archive are ONE atomic batch, also on Redis Cluster.

| key (family ``dream.…``) | type | holds |
|---|---|---|
| ``dream:{scope}:rec:{id}`` (``record``) | string | a record's JSON (its retired entries: the archive) |
| ``dream:{scope}:recs`` (``records``) | sorted set | record id → time (the history) |
| ``dream:{scope}:fb`` (``feedback``) | list | signals (JSON, labelled), the last :data:`FEEDBACK_MAX` |
| ``dream:{scope}:fbver`` (``feedback_version``) | string | +1 per feedback change (guards a rewrite) |
| ``dream:{scope}:lease`` (``lease``) | string | the token of the process running a pass now (TTL) |
| ``dream:{scope}:cursor`` (``cursor``) | string | how far the extract pass has read the turn log |

A record's TTL is the retention period.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ...engines import Engine
from ...foundation.keyspace import KeyUnder, family_named
from ...foundation.keyspace.families import DREAM

__all__ = ["FEEDBACK_MAX", "PREFIX", "DreamKeys"]

PREFIX: Final = DREAM.lead
FEEDBACK_MAX: Final = 1000
"""Feedback signals kept per scope (older ones dropped)."""
_RECORD: Final = family_named("dream.record").tail_prefix


@dataclass(frozen=True, slots=True)
class DreamKeys:
    """The dream keys of one scope on one engine."""

    base: str

    @classmethod
    def of(cls, engine: Engine, scope: str) -> DreamKeys:
        return cls(DREAM.render(engine.tag, scope=scope))

    def record(self, record_id: str) -> str:
        return f"{self.base}{_RECORD}{record_id}"

    records = KeyUnder("dream.records")
    feedback = KeyUnder("dream.feedback")
    feedback_version = KeyUnder("dream.feedback_version")
    lease = KeyUnder("dream.lease")
    cursor = KeyUnder("dream.cursor")
