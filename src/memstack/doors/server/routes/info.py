"""``GET /v1/info``: the server's version, engine and retrieval setting (mode, model, dimensions,
the entries waiting for a vector, the background vector backfill)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from .... import __version__
from ....index import registry
from ....search.embedders.setting import describe_embedder
from ._common import ERRORS, client_route

router = APIRouter(prefix="/v1", tags=["info"], responses=ERRORS)


class BackfillOut(BaseModel):
    running: bool
    written: int


class RetrievalOut(BaseModel):
    mode: str
    model: str | None
    dims: int | None
    pending: int | None = Field(
        description="The caller's tenant's entries waiting for a vector of this model; null in BM25 mode."
    )
    stale: int | None = Field(
        description="The caller's tenant's entries whose vector is another model's (recomputed by "
        "reembed); null in BM25 mode."
    )
    backfill: BackfillOut | None


class CachesOut(BaseModel):
    bytes: int = Field(description="Estimated bytes of the in-process indexes (BM25, vectors, entries).")
    entries: int = Field(description="Indexes held (one per scope, namespace or cache).")
    evictions: int = Field(description="Indexes dropped for the count or memory bound since the start.")
    bound: int = Field(description="The memory bound in bytes (MEMSTACK_INDEX_MEMORY_MB).")


class InfoOut(BaseModel):
    version: str
    engine: str
    retrieval: RetrievalOut
    caches: CachesOut


def retrieval_json(state: Any, tenant: str | None = None) -> dict[str, Any]:
    """The retrieval part of ``/v1/info`` from the app state (one shape, shared with ``doctor``):
    the counts of ``tenant``'s entries alone when one is given (a tenant never learns how much
    the others store or write), else of every tenant."""
    data = describe_embedder(state.settings.embedder)
    backfill = state.backfill  # a VectorFollower: its counts are of its last round, never read here
    if backfill is None:
        return {**data, "pending": None, "stale": None, "backfill": None}
    if tenant is None:
        pending, stale, written = backfill.pending, backfill.stale, backfill.written
    else:
        pending, stale, written = backfill.counts(tenant)
    return {
        **data,
        "pending": pending,
        "stale": stale,
        "backfill": {"running": not backfill.settled, "written": written},
    }


@client_route(
    router.get,
    "/info",
    "info",
    "info.get",
    response_model=InfoOut,
    summary="Version, engine and retrieval setting",
)
def info(request: Request) -> InfoOut:
    state = request.app.state
    return InfoOut.model_validate(
        {
            "version": __version__,
            "engine": state.engine.name,
            "retrieval": retrieval_json(state, str(request.state.tenant)),
            "caches": registry.stats()._asdict(),
        }
    )
