"""``/v1/memories``: long-term memories of the caller's tenant, by scope (a user or an agent)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, status
from pydantic import BaseModel, Field

from ...errors import EntryNotFound
from ...longterm import MemoryEntry, SearchHit
from ...longterm.search_request import metadata_from_text
from ...wire import hit_json, memory_json
from ..app import TenantMemory
from ._common import ERRORS

router = APIRouter(prefix="/v1", tags=["long-term memory"], responses=ERRORS)

ScopeParam = Annotated[str, Query(max_length=128, description="User or agent scope.")]


class MemoryIn(BaseModel):
    content: str = Field(description="The fact or preference (non-blank).")
    category: str | None = Field(None, description="A path such as user-preferences/music.")
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] | None = None
    subject: str | None = Field(None, max_length=256, description="The end user this is about (for forget).")


class MemoryOut(BaseModel):
    id: str
    content: str
    category: str | None
    tags: list[str]
    created_at: str = Field(description="ISO-8601 UTC.")
    updated_at: str | None = Field(description="ISO-8601 UTC.")
    metadata: dict[str, Any] | None


class HitOut(BaseModel):
    entry: MemoryOut
    score: float
    bm25: float | None
    vector: float | None
    sources: list[str]


class HitPage(BaseModel):
    items: list[HitOut]


class Deleted(BaseModel):
    id: str
    deleted: bool


class Names(BaseModel):
    items: list[str]


def _out(entry: MemoryEntry) -> MemoryOut:
    return MemoryOut.model_validate(memory_json(entry))


def _utc(value: datetime | None) -> datetime | None:
    """Query times without an offset are read as UTC."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _hit(hit: SearchHit) -> HitOut:
    return HitOut.model_validate(hit_json(hit))


@router.post(
    "/memories", response_model=MemoryOut, status_code=status.HTTP_201_CREATED, summary="Save a memory"
)
def save(mem: TenantMemory, body: MemoryIn, scope: ScopeParam = "default") -> MemoryOut:
    entry = mem.long_term(scope).save(
        content=body.content,
        category=body.category,
        tags=body.tags,
        metadata=body.metadata,
        subject=body.subject,
    )
    return _out(entry)


@router.get("/memories", response_model=HitPage, summary="Search (BM25; blank query lists the newest)")
def search(
    mem: TenantMemory,
    scope: ScopeParam = "default",
    query: Annotated[str | None, Query(max_length=4000)] = None,
    category: Annotated[str | None, Query(max_length=512)] = None,
    tags: Annotated[list[str] | None, Query()] = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    metadata: Annotated[
        str | None, Query(max_length=4000, description='JSON object every hit\'s metadata matches: {"k": 1}.')
    ] = None,
    mode: Annotated[
        Literal["auto", "bm25", "hybrid"], Query(description="hybrid needs an embedder.")
    ] = "auto",
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
    min_score: Annotated[float | None, Query(description="Drop ranked hits scoring below this.")] = None,
) -> HitPage:
    hits = mem.long_term(scope).search(
        query,
        mode=mode,
        category=category,
        tags=tags,
        created_after=_utc(created_after),
        created_before=_utc(created_before),
        metadata=metadata_from_text(metadata),
        limit=limit,
        min_score=min_score,
    )
    return HitPage(items=[_hit(h) for h in hits])


@router.get("/memories/{memory_id}", response_model=MemoryOut, summary="One memory")
def get(mem: TenantMemory, memory_id: str, scope: ScopeParam = "default") -> MemoryOut:
    entry = mem.long_term(scope).get(memory_id)
    if entry is None:
        raise EntryNotFound(f"no memory {memory_id!r}")
    return _out(entry)


@router.put("/memories/{memory_id}", response_model=MemoryOut, summary="Save under a given id (upsert)")
def put(mem: TenantMemory, memory_id: str, body: MemoryIn, scope: ScopeParam = "default") -> MemoryOut:
    entry = mem.long_term(scope).save(
        id=memory_id,
        content=body.content,
        category=body.category,
        tags=body.tags,
        metadata=body.metadata,
        subject=body.subject,
    )
    return _out(entry)


@router.delete("/memories/{memory_id}", response_model=Deleted, summary="Delete a memory")
def delete(mem: TenantMemory, memory_id: str, scope: ScopeParam = "default") -> Deleted:
    if not mem.long_term(scope).delete(memory_id):
        raise EntryNotFound(f"no memory {memory_id!r}")
    return Deleted(id=memory_id, deleted=True)


@router.get("/memory-categories", response_model=Names, summary="Categories of a scope")
def categories(mem: TenantMemory, scope: ScopeParam = "default") -> Names:
    return Names(items=mem.long_term(scope).list_categories())


@router.get("/memory-tags", response_model=Names, summary="Tags of a scope")
def tags_of(mem: TenantMemory, scope: ScopeParam = "default") -> Names:
    return Names(items=mem.long_term(scope).list_tags())
