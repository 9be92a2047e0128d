"""``POST /v1/forget``: remove every trace of one session, conversation, long-term scope,
working-memory namespace or shared board of the caller's tenant; answers the deletion report."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from ..app import TenantMemory
from ._common import ERRORS

router = APIRouter(prefix="/v1", tags=["forget"], responses=ERRORS)


class ForgetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subject: str | None = Field(None, max_length=256)
    session: str | None = Field(None, max_length=256)
    conversation: str | None = Field(None, max_length=256)
    scope: str | None = Field(None, max_length=128)
    namespace: str | None = Field(None, max_length=300)
    board: str | None = Field(None, max_length=128)
    vacuum: bool = Field(False, description="SQLite: also rebuild the file (slow on large files).")


class ReportOut(BaseModel):
    selector: dict[str, str]
    deleted: dict[str, int]
    total: int
    remaining: int
    complete: bool


@router.post("/forget", response_model=ReportOut, summary="Forget one thing everywhere; the deletion report")
def forget(mem: TenantMemory, body: ForgetIn) -> ReportOut:
    report = mem.forget(**body.model_dump())
    return ReportOut.model_validate(report.to_dict())
