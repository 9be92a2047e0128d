"""What ``recall`` answers: one ranked item with its kind and provenance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...tiers.longterm import MemoryEntry
from ...tiers.longterm.entry import SearchHit
from ...tiers.longterm.provenance import provenance

__all__ = ["Kind", "Recalled", "recalled"]

Kind = Literal["fact", "turn", "memory"]
TURN_SOURCE = "conversation"
"""The ``metadata["source"]`` of a turn ``remember`` saved."""
FACT_SOURCE = "extracted"
"""The ``metadata["source"]`` of a fact the extract pass saved."""


@dataclass(frozen=True, slots=True)
class Recalled:
    """One recalled item: the entry, its score in this recall, what it is (``fact`` extracted by
    a dream pass, ``turn`` said in a conversation, or ``memory`` saved by hand) and where it comes
    from (the conversations and message ids it cites; empty for a memory saved by hand)."""

    entry: MemoryEntry
    score: float
    kind: Kind
    conversations: tuple[str, ...]
    message_ids: tuple[str, ...]


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def recalled(hit: SearchHit) -> Recalled:
    """The recall item of one search hit (its kind and provenance read from its metadata)."""
    meta = hit.entry.metadata or {}
    source = meta.get("source")
    ids = _strings(meta.get("message_ids"))
    if source == FACT_SOURCE:
        return Recalled(hit.entry, hit.score, "fact", _strings(meta.get("session_ids")), ids)
    said = provenance(hit.entry)
    if source == TURN_SOURCE and said is not None:
        return Recalled(hit.entry, hit.score, "turn", (said.conversation,), ids)
    return Recalled(hit.entry, hit.score, "memory", (), ids)
