"""Conversations on the wire: messages, what the memory loop remembered and recalled, and a built
context (the messages for the model and why each item is in or out)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from typing_extensions import TypedDict

from ...foundation.timefmt import iso_utc
from .memories import MemoryJSON, memory_json

if TYPE_CHECKING:
    from ...agent.context.budget import ExplainItem
    from ...agent.context.builder import BuiltContext
    from ...services.loop import Recalled, Remembered
    from ...tiers.conversation.message import Message

__all__ = [
    "ContextJSON",
    "ExplainJSON",
    "MessageJSON",
    "RecalledJSON",
    "RememberedJSON",
    "context_json",
    "explanation_json",
    "message_json",
    "recalled_json",
    "remembered_json",
]


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
