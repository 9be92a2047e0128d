"""``/v1/conversations``: messages with branches, the active thread, token-limited history."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, status
from pydantic import BaseModel, Field

from ...conversation import Message, TokenBudget
from ...conversation.store import LATEST
from ...errors import EntryNotFound
from ...wire import message_json
from ..app import TenantMemory
from ._common import ERRORS, page_of

router = APIRouter(prefix="/v1/conversations", tags=["conversations"], responses=ERRORS)


class FileIn(BaseModel):
    type: str = Field(description="image, document, audio, video or custom")
    transfer_method: str = Field(description="local_file, tool_file or remote_url")
    upload_file_id: str | None = None
    tool_file_id: str | None = None
    url: str | None = None
    belongs_to: str | None = None


class MessageIn(BaseModel):
    role: str = Field(description="user, assistant, system or tool")
    content: str
    message_id: str | None = None
    parent_message_id: str | None = Field(
        None, description="Omit to follow the newest message; null starts a new thread."
    )
    files: list[FileIn] = Field(default_factory=list)
    workflow_run_id: str | None = None
    subject: str | None = Field(None, max_length=256, description="The end user this is about (for forget).")


class MessageOut(BaseModel):
    message_id: str
    parent_message_id: str | None
    role: str
    content: str
    files: list[dict[str, Any]]
    token_count: int
    created_at: str = Field(description="ISO-8601 UTC.")
    workflow_run_id: str | None = None


class MessageList(BaseModel):
    conversation_id: str
    items: list[MessageOut]


class ConversationPage(BaseModel):
    items: list[str]
    next_cursor: str | None = None


class PromptMessages(BaseModel):
    conversation_id: str
    messages: list[dict[str, Any]]


class Deleted(BaseModel):
    conversation_id: str
    deleted: bool


def _out(message: Message) -> MessageOut:
    return MessageOut.model_validate(message_json(message))


@router.get("", response_model=ConversationPage, summary="List conversations (sorted, paginated)")
def list_conversations(
    mem: TenantMemory,
    cursor: Annotated[str | None, Query(max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> ConversationPage:
    items, next_cursor = page_of(sorted(mem.conversations.conversations()), cursor, limit)
    return ConversationPage(items=items, next_cursor=next_cursor)


@router.post(
    "/{conversation_id}/messages",
    response_model=MessageOut,
    status_code=status.HTTP_201_CREATED,
    summary="Append a message (a regeneration names an older parent)",
)
def append(mem: TenantMemory, conversation_id: str, body: MessageIn) -> MessageOut:
    parent = body.parent_message_id if "parent_message_id" in body.model_fields_set else LATEST
    message = mem.conversations.append(
        conversation_id,
        body.role,
        body.content,
        message_id=body.message_id,
        parent_message_id=parent,
        files=[f.model_dump(exclude_none=True) for f in body.files],
        workflow_run_id=body.workflow_run_id,
        subject=body.subject,
    )
    return _out(message)


@router.get("/{conversation_id}/messages", response_model=MessageList, summary="Stored messages by position")
def messages(
    mem: TenantMemory,
    conversation_id: str,
    start: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> MessageList:
    _require(mem, conversation_id)
    found = mem.conversations.messages(conversation_id, start, start + limit - 1)
    return MessageList(conversation_id=conversation_id, items=[_out(m) for m in found])


@router.get("/{conversation_id}/messages/{message_id}", response_model=MessageOut, summary="One message")
def get_message(mem: TenantMemory, conversation_id: str, message_id: str) -> MessageOut:
    return _out(mem.conversations.get(conversation_id, message_id))


@router.get(
    "/{conversation_id}/thread", response_model=MessageList, summary="The active thread, oldest first"
)
def thread(mem: TenantMemory, conversation_id: str, current_message_id: str | None = None) -> MessageList:
    _require(mem, conversation_id)
    found = mem.conversations.thread(conversation_id, current_message_id)
    return MessageList(conversation_id=conversation_id, items=[_out(m) for m in found])


@router.get(
    "/{conversation_id}/history", response_model=PromptMessages, summary="Token-limited prompt history"
)
def history(
    mem: TenantMemory,
    conversation_id: str,
    current_message_id: str | None = None,
    max_token_limit: Annotated[int | None, Query(ge=0, le=1_000_000, description="Default 2000.")] = None,
    message_limit: Annotated[int | None, Query(ge=1, le=500)] = None,
    context_size: Annotated[
        int | None,
        Query(ge=0, le=100_000_000, description="Token budget (Dify): the model's context window."),
    ] = None,
    max_output_tokens: Annotated[int | None, Query(ge=0, le=100_000_000)] = None,
    prompt_tokens: Annotated[int | None, Query(ge=0, le=100_000_000)] = None,
) -> PromptMessages:
    _require(mem, conversation_id)
    budget = _budget(context_size, max_output_tokens, prompt_tokens)
    found = mem.conversations.history(
        conversation_id, current_message_id, max_token_limit, message_limit, token_budget=budget
    )
    return PromptMessages(conversation_id=conversation_id, messages=found)


def _budget(context_size: int | None, max_output: int | None, prompt: int | None) -> TokenBudget | None:
    """The history budget when any of its figures is given (the limit is then computed, not given)."""
    if context_size is None and max_output is None and prompt is None:
        return None
    return TokenBudget(context_size, max_output, prompt or 0)


@router.delete("/{conversation_id}", response_model=Deleted, summary="Delete a conversation")
def delete(mem: TenantMemory, conversation_id: str) -> Deleted:
    if not mem.conversations.delete(conversation_id):
        raise EntryNotFound(f"no conversation {conversation_id!r}")
    return Deleted(conversation_id=conversation_id, deleted=True)


def _require(mem: Any, conversation_id: str) -> None:
    """404 for a conversation without messages (also another tenant's)."""
    if mem.conversations.count(conversation_id) == 0:
        raise EntryNotFound(f"no conversation {conversation_id!r}")
