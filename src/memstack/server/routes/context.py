"""``/v1/context``: the messages an LLM would see on one turn, with the reasons."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from ...context import ContextBuilder
from ...wire import context_json
from ..app import TenantMemory
from ._common import ERRORS

router = APIRouter(prefix="/v1", tags=["context"], responses=ERRORS)


class ContextIn(BaseModel):
    session_id: str
    message: str = Field(description="The user's message of this turn.")
    scope: str = "default"
    namespace: str | None = Field(None, description="Working-memory namespace (default session/{id}).")
    history_turns: int = Field(20, ge=1, le=500)
    recall_limit: int = Field(8, ge=0, le=100)
    token_budget: int | None = Field(None, ge=1)
    system_prompt: str | None = None
    record_turn: bool = Field(False, description="Append the message to the session's turns first.")


class ExplainOut(BaseModel):
    kind: str
    id: str
    included: bool
    reason: str


class ContextOut(BaseModel):
    session_id: str
    namespace: str
    messages: list[dict[str, Any]]
    explain: list[ExplainOut]
    tokens: int | None
    over_budget: bool


@router.post("/context", response_model=ContextOut, summary="Build the context of one turn")
def build(mem: TenantMemory, body: ContextIn) -> ContextOut:
    builder = ContextBuilder(
        mem,
        scope=body.scope,
        history_turns=body.history_turns,
        recall_limit=body.recall_limit,
        token_budget=body.token_budget,
        system_prompt=body.system_prompt,
    )
    if body.record_turn:
        mem.turns.add(body.session_id, "user", body.message)
    built = builder.build(body.session_id, body.message, namespace=body.namespace)
    return ContextOut.model_validate(context_json(built))
