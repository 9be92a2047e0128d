"""Operations of the memory loop: remember a user's messages, recall what is known about them, and
copy the turn log's older entries into conversations (the one source of turns the passes read)."""

from __future__ import annotations

from pydantic import Field
from typing_extensions import TypedDict

from ..foundation.errors import InvalidValue
from ..services.memory import Memory
from .fields import ConversationId
from .spec import Ops, Request, Tool, cli, http
from .wire import RecalledJSON, RememberedJSON, recalled_json, remembered_json

__all__ = ["OPS"]

User = Field(max_length=128, description="The end user: their conversation, scope and subject.")


class MessageIn(Request):
    role: str = Field("user", max_length=16, description="user, assistant, system or tool")
    content: str = Field(description="The message text.")
    message_id: str | None = Field(None, max_length=128, description="Its id (default: a new UUID).")


class Remember(Request):
    user: str = User
    messages: list[MessageIn] = Field(
        default_factory=list, max_length=1000, description="The messages, oldest first."
    )
    content: str | None = Field(None, description="One message (instead of messages).")
    role: str = Field("user", max_length=16, description="The role of content.")
    conversation: ConversationId | None = Field(
        None, description="The user's conversation (default: theirs, user-{user})."
    )


class Recall(Request):
    query: str = Field(max_length=4000, description="What to look for.")
    user: str = User
    limit: int = Field(10, ge=1, le=100, description="Most items (1-100).")


class Recalls(TypedDict):
    items: list[RecalledJSON]


class MigrateTurns(Request):
    pass


class Migrated(TypedDict):
    copied: int


ops = Ops()
_REMEMBER = Tool(
    "remember",
    fields=("user", "content", "messages", "conversation"),
    description="Remember messages of a user's conversation: searchable at once, facts extracted later.",
)
_RECALL = Tool(
    "recall", description="Recall what is known about a user: memories, facts, turns, with sources."
)


@ops("loop.remember", "mem.remember(messages, user=..., conversation=...)", tool=_REMEMBER)
@http("POST /v1/remember", status=201)
@cli("remember CONTENT", names={"user": ("--user", "-u")})
def _remember(mem: Memory, r: Remember) -> RememberedJSON:
    """Append a user's messages to their conversation and make them searchable in their scope."""
    messages = [m.model_dump(exclude_none=True) for m in r.messages]
    if r.content is not None:
        messages.append({"role": r.role, "content": r.content})
    if not messages:
        raise InvalidValue("remember: give messages or content")
    return remembered_json(mem.remember(messages, user=r.user, conversation=r.conversation))


@ops("loop.recall", "mem.recall(query, user=...)", tool=_RECALL)
@http("POST /v1/recall")
@cli("recall QUERY", names={"user": ("--user", "-u")})
def _recall(mem: Memory, r: Recall) -> Recalls:
    """A user's best memories, extracted facts and turns for a query, each with its sources."""
    return {"items": [recalled_json(x) for x in mem.recall(r.query, user=r.user, limit=r.limit)]}


@ops(
    "turns.migrate",
    "mem.turns.migrate()",
    tool=Tool(
        "migrate_turns",
        description="Copy turn-log entries that are in no conversation yet into their conversations.",
    ),
)
@http("POST /v1/turns/migrate")
@cli("turns migrate")
def _migrate_turns(mem: Memory, r: MigrateTurns) -> Migrated:
    """Copy the turn log's entries that are in no conversation yet into their conversations."""
    # Turns logged before they went to conversations reach no dream pass until copied; the
    # copy keeps each turn's time, message id and user, and a second run copies nothing.
    return {"copied": mem.turns.migrate()}


OPS = tuple(ops.all)
