"""``GET /v1/info``: the server's version, engine and retrieval setting (mode, model, dimensions,
the background vector backfill)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from ... import __version__
from ...search.embedders.setting import describe_embedder
from ._common import ERRORS

router = APIRouter(prefix="/v1", tags=["info"], responses=ERRORS)


class BackfillOut(BaseModel):
    running: bool
    written: int


class RetrievalOut(BaseModel):
    mode: str
    model: str | None
    dims: int | None
    backfill: BackfillOut | None


class InfoOut(BaseModel):
    version: str
    engine: str
    retrieval: RetrievalOut


def retrieval_json(state: Any) -> dict[str, Any]:
    """The retrieval part of ``/v1/info`` from the app state (one shape, shared with ``doctor``)."""
    data = describe_embedder(state.settings.embedder)
    backfill = state.backfill
    data["backfill"] = (
        None if backfill is None else {"running": not backfill.done, "written": backfill.written}
    )
    return data


@router.get("/info", response_model=InfoOut, summary="Version, engine and retrieval setting")
def info(request: Request) -> InfoOut:
    state = request.app.state
    return InfoOut.model_validate(
        {"version": __version__, "engine": state.engine.name, "retrieval": retrieval_json(state)}
    )
