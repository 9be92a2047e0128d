"""Operations of the conversation tier: messages with branches, the active thread, the
token-limited history."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from ..foundation.errors import EntryNotFound
from ..services.memory import Memory
from ..tiers.conversation.requests import RULES, AppendMessages
from ..tiers.conversation.requests import ReadHistory as HistoryRequest
from .fields import ruled
from .paging import Page, PageRequest, page_of
from .spec import Ops, Request, Tool, cli, http
from .wire import MessageJSON, message_json

__all__ = ["OPS"]

_TOOL_APPEND = "Append a message to a conversation."
# The tier's rules, shown (not checked again): the handlers build the tier's requests.
ConversationId = Annotated[str, ruled(RULES["conversation_id"])]
_CURRENT = ruled(RULES["current_message_id"], None)


class Messages(TypedDict):
    conversation_id: str
    items: list[MessageJSON]


class Prompt(TypedDict):
    conversation_id: str
    messages: list[dict[str, Any]]


class Deleted(TypedDict):
    conversation_id: str
    deleted: bool


class FileIn(Request):
    type: str = Field(description="image, document, audio, video or custom")
    transfer_method: str = Field(description="local_file, tool_file or remote_url")
    upload_file_id: str | None = None
    tool_file_id: str | None = None
    url: str | None = None
    belongs_to: str | None = None


class ListConversations(PageRequest):
    """Which page of the stored conversations."""


class Append(Request):
    conversation_id: ConversationId
    role: str = ruled(RULES["role"])
    content: str = ruled(RULES["content"])
    message_id: str | None = ruled(RULES["message_id"], None)
    parent_message_id: str | None = ruled(RULES["parent_message_id"], None)
    files: list[FileIn] = ruled(RULES["files"], default_factory=list)
    workflow_run_id: str | None = ruled(RULES["workflow_run_id"], None)
    subject: str | None = ruled(RULES["subject"], None)


class OneConversation(Request):
    conversation_id: ConversationId


class ReadMessages(Request):
    conversation_id: ConversationId
    start: int = Field(0, ge=0, description="Position of the first message.")
    limit: int = Field(100, ge=1, le=1000, description="Most messages (1-1000).")


class OneMessage(Request):
    conversation_id: ConversationId
    message_id: str = Field(json_schema_extra=dict(RULES["message_id"].json), description="The message's id.")


class ReadThread(Request):
    conversation_id: ConversationId
    current_message_id: str | None = _CURRENT


class ReadHistory(Request):
    conversation_id: ConversationId
    current_message_id: str | None = _CURRENT
    # The upper bounds are the doors' own (the library caps a message limit at 500 itself).
    max_token_limit: int | None = ruled(RULES["max_token_limit"], None, le=1_000_000)
    message_limit: int | None = ruled(RULES["message_limit"], None, ge=1, le=500)
    context_size: int | None = ruled(RULES["context_size"], None, le=100_000_000)
    max_output_tokens: int | None = ruled(RULES["max_output_tokens"], None, le=100_000_000)
    prompt_tokens: int | None = ruled(RULES["prompt_tokens"], None, le=100_000_000)


def _require(mem: Memory, conversation_id: str) -> None:
    """A conversation without messages is not found (also another tenant's)."""
    if mem.conversations.count(conversation_id) == 0:
        raise EntryNotFound(f"no conversation {conversation_id!r}")


ops = Ops()
_ONE = "/v1/conversations/{conversation_id}"
_MESSAGE = {"current_message_id": ("--message",)}


@ops("conversations.list", "mem.conversations.conversations()", tool="list_conversations")
@http("GET /v1/conversations")
@cli("conversations list")
def _list(mem: Memory, r: ListConversations) -> Page:
    """List the stored conversations (sorted, paged)."""
    return page_of(mem.conversations.conversations(), r)


_ADD = {"message_id": ("--id",), "parent_message_id": ("--parent",), "workflow_run_id": ("--run-id",)}
_APPEND = Tool("conversation_append", fields=("conversation_id", "role", "content"), description=_TOOL_APPEND)


@ops("conversations.append", "mem.conversations.append(conversation_id, role, content)", tool=_APPEND)
@http("POST " + _ONE + "/messages", status=201)
@cli("conversations add CONVERSATION_ID ROLE CONTENT", names=_ADD, blank_is_null=("parent_message_id",))
def _append(mem: Memory, r: Append) -> MessageJSON:
    """Append a message (a regeneration names an older parent)."""
    from ..tiers.conversation.store import LATEST

    parent = r.parent_message_id if "parent_message_id" in r.model_fields_set else LATEST
    request = AppendMessages.one(
        r.conversation_id,
        r.role,
        r.content,
        message_id=r.message_id,
        parent_message_id=parent,
        files=[f.model_dump(exclude_none=True) for f in r.files],
        workflow_run_id=r.workflow_run_id,
        subject=r.subject,
    )
    return message_json(mem.conversations.add(request)[0])


@ops("conversations.messages", "mem.conversations.messages(conversation_id, start, stop)")
@http("GET " + _ONE + "/messages")
@cli("conversations messages CONVERSATION_ID")
def _messages(mem: Memory, r: ReadMessages) -> Messages:
    """Stored messages by position."""
    _require(mem, r.conversation_id)
    found = mem.conversations.messages(r.conversation_id, r.start, r.start + r.limit - 1)
    return {"conversation_id": r.conversation_id, "items": [message_json(m) for m in found]}


@ops("conversations.message", "mem.conversations.get(conversation_id, message_id)")
@http("GET " + _ONE + "/messages/{message_id}")
@cli("conversations message CONVERSATION_ID MESSAGE_ID")
def _message(mem: Memory, r: OneMessage) -> MessageJSON:
    """One message."""
    return message_json(mem.conversations.get(r.conversation_id, r.message_id))


@ops("conversations.thread", "mem.conversations.thread(conversation_id)")
@http("GET " + _ONE + "/thread")
@cli("conversations thread CONVERSATION_ID", names=_MESSAGE)
def _thread(mem: Memory, r: ReadThread) -> Messages:
    """The active thread ending at the current message, oldest first."""
    _require(mem, r.conversation_id)
    found = mem.conversations.thread(r.conversation_id, r.current_message_id)
    return {"conversation_id": r.conversation_id, "items": [message_json(m) for m in found]}


@ops("conversations.history", "mem.conversations.history(conversation_id)", tool="conversation_history")
@http("GET " + _ONE + "/history")
@cli("conversations history CONVERSATION_ID", names={**_MESSAGE, "max_token_limit": ("--max-tokens",)})
def _history(mem: Memory, r: ReadHistory) -> Prompt:
    """The active thread as chat messages, within a token budget."""
    from ..tiers.conversation import TokenBudget

    budget = None
    if r.context_size is not None or r.max_output_tokens is not None or r.prompt_tokens is not None:
        budget = TokenBudget(r.context_size, r.max_output_tokens, r.prompt_tokens or 0)
    request = HistoryRequest.of(
        r.conversation_id,
        current_message_id=r.current_message_id,
        max_token_limit=r.max_token_limit,
        message_limit=r.message_limit,
        token_budget=budget,
    )
    _require(mem, r.conversation_id)
    return {"conversation_id": r.conversation_id, "messages": mem.conversations.read_history(request)}


@ops("conversations.delete", "mem.conversations.delete(conversation_id)")
@http("DELETE " + _ONE)
@cli("conversations delete CONVERSATION_ID")
def _delete(mem: Memory, r: OneConversation) -> Deleted:
    """Delete a conversation and its messages."""
    if not mem.conversations.delete(r.conversation_id):
        raise EntryNotFound(f"no conversation {r.conversation_id!r}")
    return {"conversation_id": r.conversation_id, "deleted": True}


OPS = tuple(ops.all)
