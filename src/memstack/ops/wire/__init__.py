"""The one JSON shape of each object on every surface (CLI ``--json``, HTTP, MCP, the inspector).

Field names are the library's; every time is :func:`memstack.foundation.timefmt.iso_utc` text. Each shape is
a ``TypedDict`` and its serializer returns it: the type checker holds every serializer to its
shape, and the HTTP API publishes the same types in its OpenAPI document. The operations registry
(:mod:`memstack.ops`) builds every door's results from these; tests/ops/ compares the doors.
Objects with their own ``to_dict`` (dream records, changes, forget reports) follow the same rules.

The shapes live one family a module (:mod:`.memories`: long-term entries, hits and dream records;
:mod:`.conversations`: messages, the memory loop, built contexts; :mod:`.records`: working
entries, session history, shared documents, API keys; :mod:`.store`: the LangGraph store's
items); this package names them all.
"""

from __future__ import annotations

from .conversations import (
    ContextJSON,
    ExplainJSON,
    MessageJSON,
    RecalledJSON,
    RememberedJSON,
    context_json,
    explanation_json,
    message_json,
    recalled_json,
    remembered_json,
)
from .memories import (
    CreatedJSON,
    DreamRecordJSON,
    DreamSummaryJSON,
    HitJSON,
    MemoryEventJSON,
    MemoryJSON,
    dream_record_json,
    dream_summary_json,
    hit_json,
    memory_event_json,
    memory_json,
)
from .records import (
    ApiKeyJSON,
    DocumentJSON,
    WorkingJSON,
    api_key_json,
    document_json,
    history_json,
    working_json,
)
from .store import FoundJSON, ItemJSON, found_json, item_json

__all__ = [
    "ApiKeyJSON",
    "ContextJSON",
    "CreatedJSON",
    "DocumentJSON",
    "DreamRecordJSON",
    "DreamSummaryJSON",
    "ExplainJSON",
    "FoundJSON",
    "HitJSON",
    "ItemJSON",
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
    "found_json",
    "history_json",
    "hit_json",
    "item_json",
    "memory_event_json",
    "memory_json",
    "message_json",
    "recalled_json",
    "remembered_json",
    "working_json",
]
