"""The long-term tier's objects on the wire: entries, their changes, search hits and the dream
records that change them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from typing_extensions import TypedDict

from ...tiers.longterm.entry import entry_json
from ...tiers.longterm.history import event_json

if TYPE_CHECKING:
    from ...services.dream.record import DreamRecord
    from ...tiers.longterm.entry import MemoryEntry, SearchHit
    from ...tiers.longterm.history import HistoryEvent

__all__ = [
    "CreatedJSON",
    "DreamRecordJSON",
    "DreamSummaryJSON",
    "HitJSON",
    "MemoryEventJSON",
    "MemoryJSON",
    "dream_record_json",
    "dream_summary_json",
    "hit_json",
    "memory_event_json",
    "memory_json",
]


class MemoryJSON(TypedDict):
    """A long-term entry; times ISO-8601 UTC (``updated_at`` null until an update). ``valid_from``:
    when the fact became true; ``valid_to`` and ``superseded_by``: set once another entry replaced
    it; ``expires_at``: its own expiry (null: none)."""

    id: str
    content: str
    category: str | None
    tags: list[str]
    created_at: str
    updated_at: str | None
    metadata: dict[str, Any] | None
    valid_from: str
    valid_to: str | None
    superseded_by: str | None
    expires_at: str | None


class MemoryEventJSON(TypedDict):
    """One change of a long-term entry (:mod:`memstack.tiers.longterm.history`): ``op`` (create, update,
    supersede, retire, restore), ``actor`` (api, tool, import, dream:{record}, undo:{record}), the
    versions before and after, and the entries the change links."""

    at: str
    op: str
    actor: str
    old: MemoryJSON | None
    new: MemoryJSON | None
    related_ids: list[str]


class HitJSON(TypedDict):
    """A search hit: the entry, its final ``score`` and what each retriever said."""

    entry: MemoryJSON
    score: float
    bm25: float | None
    vector: float | None
    sources: list[str]
    bm25_part: float | None
    vector_part: float | None


class CreatedJSON(MemoryJSON):
    """An entry a dream pass created, with the entries it came from (``message_ids``: the
    conversation turns an ``extract`` pass learnt it from)."""

    source_ids: list[str]
    message_ids: list[str]


class _DreamJSON(TypedDict):
    """What every form of a dream record says."""

    id: str
    scope: str
    kind: str
    status: str
    at: str | None
    model: str | None
    reason: str | None
    undone_at: str | None


class DreamRecordJSON(_DreamJSON):
    """A whole dream record: every retired and created entry."""

    prompt_digest: str | None
    retired: list[MemoryJSON]
    created: list[CreatedJSON]
    superseded: list[MemoryJSON]
    unknown_ids: list[str]
    dropped: int
    kept: list[str]


class DreamSummaryJSON(_DreamJSON):
    """A dream record in a history listing: counts instead of entries."""

    retired_count: int
    created_count: int
    superseded_count: int


def memory_json(entry: MemoryEntry) -> MemoryJSON:
    """A long-term entry (:func:`memstack.tiers.longterm.entry.entry_json`: the tier owns its shape, so
    the dream records below this module give it too)."""
    return cast("MemoryJSON", entry_json(entry))


def memory_event_json(event: HistoryEvent) -> MemoryEventJSON:
    """One change of a long-term entry (:func:`memstack.tiers.longterm.history.event_json`)."""
    return cast("MemoryEventJSON", event_json(event))


def hit_json(hit: SearchHit) -> HitJSON:
    """A search hit (``sources`` is always a list)."""
    return {
        "entry": memory_json(hit.entry),
        "score": hit.score,
        "bm25": hit.bm25,
        "vector": hit.vector,
        "sources": list(hit.sources),
        "bm25_part": hit.bm25_part,
        "vector_part": hit.vector_part,
    }


def dream_record_json(record: DreamRecord) -> DreamRecordJSON:
    """A whole dream record (``show``, ``run``, a dry run)."""
    return cast("DreamRecordJSON", record.to_dict())


def dream_summary_json(record: DreamRecord) -> DreamSummaryJSON:
    """A dream record in a history listing.

    The counts are ``retired_count`` / ``created_count``, never ``retired`` / ``created``: those
    name lists in :func:`dream_record_json`, and one field name keeps one type.
    """
    return cast("DreamSummaryJSON", record.summary())
