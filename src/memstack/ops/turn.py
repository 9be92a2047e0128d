"""Operations around one turn and one person: the context an LLM sees, and forgetting."""

from __future__ import annotations

from pydantic import Field
from typing_extensions import TypedDict

from ..services.memory import Memory
from .fields import Board, ConversationId, Scope, SessionId
from .spec import Ops, Request, cli, http
from .wire import ContextJSON, context_json

__all__ = ["OPS"]


class Report(TypedDict):
    selector: dict[str, str]
    deleted: dict[str, int]
    total: int
    remaining: int
    complete: bool


class BuildContext(Request):
    session_id: SessionId
    message: str = Field(description="The user's message of this turn.")
    scope: Scope = "default"
    namespace: str | None = Field(
        None, max_length=300, description="Working-memory namespace (default session/{id})."
    )
    history_turns: int = Field(20, ge=1, le=500, description="Recent turns included (1-500).")
    recall_limit: int = Field(8, ge=0, le=100, description="Long-term memories recalled (0-100).")
    token_budget: int | None = Field(None, ge=1, description="Token budget of the whole context.")
    system_prompt: str | None = Field(None, description="A system prompt to put first.")
    record_turn: bool = Field(False, description="Append the message to the session's turns first.")
    dry_run: bool = Field(False, description="Preview: mark no recalled memory as injected.")


class Forget(Request):
    subject: str | None = Field(
        None, max_length=256, description="An end user: everything written about them."
    )
    session: str | None = Field(
        None, max_length=256, description="A session: state, turns, windows, working memory."
    )
    conversation: ConversationId | None = Field(None, description="A conversation and its messages.")
    scope: Scope | None = Field(None, description="A long-term scope: entries, vectors, dream records.")
    namespace: str | None = Field(
        None, max_length=300, description="Working memory under a path (whole segments)."
    )
    board: Board | None = Field(None, description="A shared board with its cache and documents.")
    vacuum: bool = Field(False, description="SQLite: also rebuild the file (slow on large files).")


ops = Ops()
_CONTEXT_NAMES = {
    "session_id": ("--session", "-s"),
    "system_prompt": ("--system",),
    "token_budget": ("--budget",),
    "dry_run": ("--dry-run/--mark-injected",),
}


@ops("context.build", "ContextBuilder(mem).build(session_id, message)")
@http("POST /v1/context")
@cli("context MESSAGE", names=_CONTEXT_NAMES, defaults={"dry_run": True})  # the command previews
def _build(mem: Memory, r: BuildContext) -> ContextJSON:
    """The messages the context builder gives one turn, with why each item is in or out."""
    from ..agent.context import ContextBuilder

    builder = ContextBuilder(
        mem,
        scope=r.scope,
        history_turns=r.history_turns,
        recall_limit=r.recall_limit,
        token_budget=r.token_budget,
        system_prompt=r.system_prompt,
    )
    if r.record_turn:
        mem.turns.add(r.session_id, "user", r.message)
    return context_json(builder.build(r.session_id, r.message, namespace=r.namespace, dry_run=r.dry_run))


@ops("forget", "mem.forget(subject=...)")
@http("POST /v1/forget")
@cli("forget")
def _forget(mem: Memory, r: Forget) -> Report:
    """Forget one subject, session, conversation, scope, namespace or board everywhere; the report."""
    data = mem.forget(**r.model_dump()).to_dict()
    return {
        "selector": data["selector"],
        "deleted": data["deleted"],
        "total": data["total"],
        "remaining": data["remaining"],
        "complete": data["complete"],
    }


OPS = tuple(ops.all)
