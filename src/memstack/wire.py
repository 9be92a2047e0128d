"""The one JSON shape of each object on every surface (CLI ``--json``, HTTP, MCP, the inspector).

Field names are the library's; every time is :func:`memstack.timefmt.iso_utc` text. HTTP response
models validate these dicts, the CLI prints them, MCP tools return them; tests/test_one_serializer.py
compares the surfaces. Objects with their own ``to_dict`` (dream records, changes, forget
reports) follow the same rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .longterm.entry import entry_json
from .timefmt import iso_utc

if TYPE_CHECKING:
    from .context.budget import ExplainItem
    from .context.builder import BuiltContext
    from .conversation.message import Message
    from .dream.record import DreamRecord
    from .longterm.entry import MemoryEntry, SearchHit
    from .working.entry import WorkingEntry

__all__ = [
    "api_key_json",
    "context_json",
    "document_json",
    "dream_record_json",
    "dream_summary_json",
    "explanation_json",
    "history_json",
    "hit_json",
    "memory_json",
    "message_json",
    "working_json",
]


def memory_json(entry: MemoryEntry) -> dict[str, Any]:
    """A long-term entry (:func:`memstack.longterm.entry.entry_json`: the tier owns its shape, so
    the dream records below this module give it too)."""
    return entry_json(entry)


def hit_json(hit: SearchHit) -> dict[str, Any]:
    """A search hit: the entry and what each retriever said (``sources`` is always a list)."""
    return {
        "entry": memory_json(hit.entry),
        "score": hit.score,
        "bm25": hit.bm25,
        "vector": hit.vector,
        "sources": list(hit.sources),
    }


def message_json(message: Message) -> dict[str, Any]:
    """A conversation message (the stored record with ``created_at`` as ISO text)."""
    data = message.to_dict()
    data["created_at"] = iso_utc(message.created_at)
    return data


def working_json(entry: WorkingEntry) -> dict[str, Any]:
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
    """An API key's public record (:class:`memstack.server.keys.ApiKey`, a door above this module)."""

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


def api_key_json(key: ApiKey) -> dict[str, Any]:
    """An API key's public record (never its secret)."""
    return {
        "key_id": key.key_id,
        "tenants": list(key.tenants),
        "label": key.label,
        "admin": key.admin,
        "rate": key.rate,
        "created_at": iso_utc(key.created_at),
    }


def document_json(name: str, doc: Mapping[str, Any]) -> dict[str, Any]:
    """A document of shared memory ``name``, from :meth:`DocumentStore.get
    <memstack.shared.documents.DocumentStore.get>` (which keeps the stored epoch milliseconds)."""
    return {
        "name": name,
        "key": doc["key"],
        "text": doc["text"],
        "metadata": doc["metadata"],
        "created_at": iso_utc(doc["created"] / 1000),
        "updated_at": iso_utc(doc["updated"] / 1000),
    }


def explanation_json(item: ExplainItem) -> dict[str, Any]:
    """Why one item is (or is not) in a built context."""
    return {"kind": item.kind, "id": item.ident, "included": item.included, "reason": item.reason}


def context_json(built: BuiltContext) -> dict[str, Any]:
    """A built context: the messages for the model and why each item is in or out."""
    return {
        "session_id": built.session_id,
        "namespace": built.namespace,
        "messages": built.messages,
        "explain": [explanation_json(e) for e in built.explain],
        "tokens": built.tokens,
        "over_budget": built.over_budget,
    }


def dream_record_json(record: DreamRecord) -> dict[str, Any]:
    """A whole dream record: every retired and created entry (``show``, ``run``, a dry run)."""
    return record.to_dict()


def dream_summary_json(record: DreamRecord) -> dict[str, Any]:
    """A dream record in a history listing: counts instead of entries.

    The counts are ``retired_count`` / ``created_count``, never ``retired`` / ``created``: those
    name lists in :func:`dream_record_json`, and one field name keeps one type.
    """
    return record.summary()
