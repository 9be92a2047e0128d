"""The one JSON shape of each object on every surface (CLI ``--json``, HTTP, MCP, the inspector).

Field names are the library's; every time is :func:`memstack.foundation.timefmt.iso_utc` text. Each shape is
a ``TypedDict`` and its serializer returns it: the type checker holds every serializer to its
shape, and the HTTP API publishes the same types in its OpenAPI document. The operations registry
(:mod:`memstack.ops`) builds every door's results from these; tests/ops/ compares the doors.
Objects with their own ``to_dict`` (dream records, changes, forget reports) follow the same rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from typing_extensions import TypedDict

from ..foundation.timefmt import iso_utc
from ..tiers.longterm.entry import entry_json
from ..tiers.longterm.history import event_json

if TYPE_CHECKING:
    from ..agent.context.budget import ExplainItem
    from ..agent.context.builder import BuiltContext
    from ..services.dream.record import DreamRecord
    from ..services.loop import Recalled, Remembered
    from ..tiers.conversation.message import Message
    from ..tiers.longterm.entry import MemoryEntry, SearchHit
    from ..tiers.longterm.history import HistoryEvent
    from ..tiers.working.entry import WorkingEntry

__all__ = [
    "ApiKeyJSON",
    "ContextJSON",
    "CreatedJSON",
    "DocumentJSON",
    "DreamRecordJSON",
    "DreamSummaryJSON",
    "ExplainJSON",
    "HitJSON",
    "MemoryEventJSON",
    "MemoryJSON",
    "MessageJSON",
    "RecalledJSON",
    "RememberedJSON",
    "WorkingJSON",
    "api_key_json",
    "context_json",
    "document_json",
    "dream_record_json",
    "dream_summary_json",
    "explanation_json",
    "history_json",
    "hit_json",
    "memory_event_json",
    "memory_json",
    "message_json",
    "recalled_json",
    "remembered_json",
    "working_json",
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


class MessageJSON(TypedDict):
    """A conversation message."""

    message_id: str
    parent_message_id: str | None
    role: str
    content: str
    files: list[dict[str, Any]]
    token_count: int
    created_at: str
    workflow_run_id: str | None


class WorkingJSON(TypedDict):
    """A working-memory entry."""

    key: str
    value: Any
    stored_at: str
    expires_at: str
    category: str | None
    tags: list[str]


class ApiKeyJSON(TypedDict):
    """An API key's public record (never its secret)."""

    key_id: str
    tenants: list[str]
    label: str
    admin: bool
    rate: int | None
    created_at: str


class DocumentJSON(TypedDict):
    """A document of a shared board."""

    name: str
    key: str
    text: str
    metadata: dict[str, Any]
    created_at: str
    updated_at: str


class ExplainJSON(TypedDict):
    """Why one item is (or is not) in a built context."""

    kind: str
    id: str
    included: bool
    reason: str


class ContextJSON(TypedDict):
    """A built context: the messages for the model and why each item is in or out."""

    session_id: str
    namespace: str
    messages: list[dict[str, Any]]
    explain: list[ExplainJSON]
    tokens: int | None
    over_budget: bool


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


def message_json(message: Message) -> MessageJSON:
    """A conversation message (the stored record with ``created_at`` as ISO text)."""
    data = message.to_dict()
    data["created_at"] = iso_utc(message.created_at)
    return cast("MessageJSON", data)


class RememberedJSON(TypedDict):
    """What ``remember`` did: the user's conversation, the messages appended, the entries that make
    them searchable, and whether an extract pass is queued."""

    user: str
    conversation: str
    messages: list[MessageJSON]
    entries: list[MemoryJSON]
    queued: bool


class RecalledJSON(TypedDict):
    """One recalled item: the entry, its score, its ``kind`` (``fact``, ``turn``, ``memory``) and
    the conversations and message ids it comes from."""

    entry: MemoryJSON
    score: float
    kind: str
    conversations: list[str]
    message_ids: list[str]


def remembered_json(done: Remembered) -> RememberedJSON:
    """What one ``remember`` did."""
    return {
        "user": done.user,
        "conversation": done.conversation,
        "messages": [message_json(m) for m in done.messages],
        "entries": [memory_json(e) for e in done.entries],
        "queued": done.queued,
    }


def recalled_json(item: Recalled) -> RecalledJSON:
    """One recalled item."""
    return {
        "entry": memory_json(item.entry),
        "score": item.score,
        "kind": item.kind,
        "conversations": list(item.conversations),
        "message_ids": list(item.message_ids),
    }


def working_json(entry: WorkingEntry) -> WorkingJSON:
    """A working-memory entry (``value`` None in a value-less listing)."""
    return {
        "key": entry.key,
        "value": entry.value,
        "stored_at": iso_utc(entry.stored_at),
        "expires_at": iso_utc(entry.expires_at),
        "category": entry.category,
        "tags": list(entry.tags),
    }


def history_json(item: Mapping[str, Any]) -> dict[str, Any]:
    """A session history entry: its fields as stored, ``timestamp`` as ISO text."""
    data = dict(item)
    stamp = data.get("timestamp")
    if isinstance(stamp, int | float) and not isinstance(stamp, bool):
        data["timestamp"] = iso_utc(stamp)
    return data


class ApiKey(Protocol):
    """An API key's public record (:class:`memstack.doors.server.keys.ApiKey`, a door above this module)."""

    @property
    def key_id(self) -> str: ...

    @property
    def tenants(self) -> tuple[str, ...]: ...

    @property
    def label(self) -> str: ...

    @property
    def admin(self) -> bool: ...

    @property
    def rate(self) -> int | None: ...

    @property
    def created_at(self) -> float: ...


def api_key_json(key: ApiKey) -> ApiKeyJSON:
    """An API key's public record (never its secret)."""
    return {
        "key_id": key.key_id,
        "tenants": list(key.tenants),
        "label": key.label,
        "admin": key.admin,
        "rate": key.rate,
        "created_at": iso_utc(key.created_at),
    }


def document_json(name: str, doc: Mapping[str, Any]) -> DocumentJSON:
    """A document of shared memory ``name``, from :meth:`DocumentStore.get
    <memstack.tiers.shared.documents.DocumentStore.get>` (which keeps the stored epoch milliseconds)."""
    return {
        "name": name,
        "key": doc["key"],
        "text": doc["text"],
        "metadata": doc["metadata"],
        "created_at": iso_utc(doc["created"] / 1000),
        "updated_at": iso_utc(doc["updated"] / 1000),
    }


def explanation_json(item: ExplainItem) -> ExplainJSON:
    """Why one item is (or is not) in a built context."""
    return {"kind": item.kind, "id": item.ident, "included": item.included, "reason": item.reason}


def context_json(built: BuiltContext) -> ContextJSON:
    """A built context."""
    return {
        "session_id": built.session_id,
        "namespace": built.namespace,
        "messages": built.messages,
        "explain": [explanation_json(e) for e in built.explain],
        "tokens": built.tokens,
        "over_budget": built.over_budget,
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
