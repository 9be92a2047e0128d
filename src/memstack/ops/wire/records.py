"""Keyed records on the wire: working-memory entries, session history entries, shared documents
and API keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from typing_extensions import TypedDict

from ...foundation.timefmt import iso_utc

if TYPE_CHECKING:
    from ...tiers.working.entry import WorkingEntry

__all__ = [
    "ApiKey",
    "ApiKeyJSON",
    "DocumentJSON",
    "WorkingJSON",
    "api_key_json",
    "document_json",
    "history_json",
    "working_json",
]


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
