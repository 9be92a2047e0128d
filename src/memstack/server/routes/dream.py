"""``/v1/dream``: run (or dry-run) passes over a scope, list and show records, undo a pass.

The chat model of the LLM passes comes from ``MEMSTACK_CHAT_URL`` / ``MEMSTACK_CHAT_MODEL``;
``dedupe`` needs none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field

from ...dream import Dreamer
from ...llm.chat import chat_model_from_env
from ...wire import dream_record_json, dream_summary_json
from ..app import TenantMemory
from ._common import ERRORS

router = APIRouter(prefix="/v1/dream", tags=["dream"], responses=ERRORS)

ScopeParam = Annotated[str, Query(max_length=128, description="User or agent scope.")]
RecordId = Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9]+$", description="A dream record id.")]
PassName = Literal["consolidate", "preferences", "dedupe"]


def _default_passes() -> list[PassName]:
    return ["consolidate", "preferences"]


class RunIn(BaseModel):
    passes: list[PassName] = Field(
        default_factory=_default_passes, max_length=3, description="Passes, in order."
    )
    dry_run: bool = Field(False, description="Compute the plans; write nothing.")
    force: bool = Field(False, description="Apply plans the guard rails refuse.")


class EntryOut(BaseModel):
    id: str
    content: str
    category: str | None
    tags: list[str]
    created_at: str
    updated_at: str | None
    metadata: dict[str, Any] | None


class CreatedOut(EntryOut):
    source_ids: list[str]


class RecordOut(BaseModel):
    id: str
    scope: str
    kind: str
    status: str
    at: str | None
    model: str | None
    prompt_digest: str | None
    retired: list[EntryOut]
    created: list[CreatedOut]
    unknown_ids: list[str]
    dropped: int
    reason: str | None
    undone_at: str | None
    kept: list[str]


class RecordPage(BaseModel):
    items: list[RecordOut]


class SummaryOut(BaseModel):
    """A record in the history listing (:func:`~memstack.wire.dream_summary_json`)."""

    id: str
    scope: str
    kind: str
    status: str
    at: str | None
    model: str | None
    retired_count: int
    created_count: int
    reason: str | None
    undone_at: str | None


class SummaryPage(BaseModel):
    items: list[SummaryOut]


class UndoOut(BaseModel):
    record_id: str
    restored: list[str]
    removed: list[str]
    kept: list[str]


def _dreamer(mem: Any, scope: str, passes: Sequence[str] | None = None) -> Dreamer:
    model = chat_model_from_env() if passes is None or set(passes) - {"dedupe"} else None
    return Dreamer(mem.long_term(scope), model=model, turns=mem.turns)


@router.post("/runs", response_model=RecordPage, summary="Run (or dry-run) dream passes over a scope")
def run(mem: TenantMemory, body: RunIn, scope: ScopeParam = "default") -> RecordPage:
    passes = list(dict.fromkeys(body.passes))
    records = _dreamer(mem, scope, passes).run(passes, dry_run=body.dry_run, force=body.force)
    return RecordPage(items=[RecordOut.model_validate(dream_record_json(r)) for r in records])


@router.get(
    "/records",
    response_model=SummaryPage,
    summary="The scope's dream records, newest first (counts; one record's entries: GET its id)",
)
def history(
    mem: TenantMemory, scope: ScopeParam = "default", limit: Annotated[int, Query(ge=1, le=1000)] = 50
) -> SummaryPage:
    records = Dreamer(mem.long_term(scope)).history(limit)
    return SummaryPage(items=[SummaryOut.model_validate(dream_summary_json(r)) for r in records])


@router.get("/records/{record_id}", response_model=RecordOut, summary="One dream record")
def show(mem: TenantMemory, record_id: RecordId, scope: ScopeParam = "default") -> RecordOut:
    return RecordOut.model_validate(dream_record_json(Dreamer(mem.long_term(scope)).show(record_id)))


@router.post("/records/{record_id}/undo", response_model=UndoOut, summary="Undo an applied pass")
def undo(mem: TenantMemory, record_id: RecordId, scope: ScopeParam = "default") -> UndoOut:
    return UndoOut.model_validate(Dreamer(mem.long_term(scope)).undo(record_id).to_dict())


class FeedbackIn(BaseModel):
    kind: str = Field(max_length=64, description="correction, positive, negative…")
    text: str = Field(max_length=4000, description="What the user said about the assistant.")
    subject: str | None = Field(None, max_length=256, description="The end user it is about.")


class FeedbackOut(BaseModel):
    kind: str
    text: str
    timestamp: str


@router.post("/feedback", response_model=FeedbackOut, status_code=201, summary="Record a feedback signal")
def add_feedback(mem: TenantMemory, body: FeedbackIn, scope: ScopeParam = "default") -> FeedbackOut:
    signal = Dreamer(mem.long_term(scope)).feedback.add(body.kind, body.text, subject=body.subject)
    return FeedbackOut.model_validate(signal.to_dict())
