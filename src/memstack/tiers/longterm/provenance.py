"""Conversation provenance of a long-term entry: the one metadata convention search relies on.

An entry saved from a conversation (a turn of the turn log, a message of a thread) carries, in its
``metadata``, the key ``"conversation"`` holding an object::

    {"id": "conv-26", "turn": 12, "speaker": "Caroline", "time": "2023-05-08T13:56:00+00:00"}

``id`` (required, a non-empty string) names the conversation; ``turn`` (required, a finite number)
orders its entries (any increasing numbering: a turn index, a timestamp; ties are ordered by entry id);
``speaker`` (optional string) says who spoke; ``time`` (optional ISO 8601 string) is when the session
took place (the entry's ``created_at`` is used when it is absent). Neighbouring turns are the entries of
the same scope with the same ``id``, in ``turn`` order.

Entries whose ``"conversation"`` value does not follow this shape are simply treated as having no
provenance (a search option never rejects an entry).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from .entry import MemoryEntry

__all__ = ["PROVENANCE_KEY", "Provenance", "conversation_metadata", "provenance"]

PROVENANCE_KEY: Final = "conversation"
"""The metadata key of conversation provenance."""


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where an entry was said: conversation, position, speaker and session time."""

    conversation: str
    turn: float
    speaker: str | None
    time: datetime | None


def conversation_metadata(
    conversation: str, turn: float, speaker: str | None = None, time: datetime | None = None
) -> dict[str, Any]:
    """The ``metadata`` value that records this provenance (merge it into an entry's metadata)."""
    data: dict[str, Any] = {"id": conversation, "turn": turn}
    if speaker is not None:
        data["speaker"] = speaker
    if time is not None:
        data["time"] = time.astimezone(UTC).isoformat()
    return {PROVENANCE_KEY: data}


def provenance(entry: MemoryEntry) -> Provenance | None:
    """The entry's conversation provenance, or None when it has none (or a malformed one)."""
    data = (entry.metadata or {}).get(PROVENANCE_KEY)
    if not isinstance(data, dict):
        return None
    conversation, turn = data.get("id"), data.get("turn")
    if not isinstance(conversation, str) or not conversation:
        return None
    if isinstance(turn, bool) or not isinstance(turn, (int, float)) or not math.isfinite(turn):
        return None
    speaker = data.get("speaker")
    return Provenance(
        conversation,
        float(turn),
        speaker if isinstance(speaker, str) and speaker.strip() else None,
        _time(data.get("time")) or entry.created_at,
    )


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
