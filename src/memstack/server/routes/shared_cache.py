"""``/v1/shared/{name}/cache`` and ``/v1/shared/{name}/documents``: the semantic cache and the
document store of a shared memory.

The service has no chat model to call, so the cache's ``fetch`` is split in two: ``lookup``
answers a hit (and counts it) or a miss (counted too), after which the client calls its model
and ``store``s the answer. The cache embeds with :func:`~memstack.shared.cache.default_embedder`;
documents are searched by BM25.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, status
from pydantic import BaseModel, Field

from ...errors import EntryNotFound
from ...shared.cache import SemanticCache, default_embedder
from ...shared.documents import DocumentStore
from ...wire import document_json
from ..app import TenantMemory
from ._common import ERRORS

router = APIRouter(prefix="/v1/shared", tags=["shared memory: cache and documents"], responses=ERRORS)

Threshold = Annotated[float | None, Field(ge=0, le=1, description="Least similarity (default 0.92).")]
DocKey = Annotated[str, Path(min_length=1, max_length=256)]


class LookupIn(BaseModel):
    query: str = Field(max_length=100_000)
    threshold: Threshold = None


class CacheEntry(BaseModel):
    id: str
    query: str
    response: Any
    similarity: float
    metadata: dict[str, Any]


class LookupOut(BaseModel):
    name: str
    hit: bool
    entry: CacheEntry | None = None


class StoreIn(BaseModel):
    query: str = Field(max_length=100_000)
    response: Any = Field(description="Any JSON value.")
    metadata: dict[str, Any] = Field(default_factory=dict)
    ttl: float | None = Field(None, gt=0, description="Seconds; omit to keep forever.")
    subject: str | None = Field(None, max_length=256, description="The end user it is about.")


class Stored(BaseModel):
    name: str
    id: str


class SearchIn(BaseModel):
    query: str = Field(max_length=100_000)
    limit: int = Field(5, ge=1, le=100)


class CacheHits(BaseModel):
    name: str
    items: list[CacheEntry]


class InvalidateIn(BaseModel):
    query: str = Field(max_length=100_000)
    threshold: Threshold = None
    limit: int = Field(100, ge=1, le=10_000)


class Count(BaseModel):
    name: str
    count: int


class Stats(BaseModel):
    name: str
    hits: int
    misses: int
    hit_rate: float
    entries: int


class DocumentIn(BaseModel):
    content: str = Field(max_length=1_000_000)
    metadata: dict[str, Any] | None = None
    subject: str | None = Field(None, max_length=256, description="The end user it is about.")


class Document(BaseModel):
    """A document (:func:`~memstack.wire.document_json`)."""

    name: str
    key: str
    text: str
    metadata: dict[str, Any]
    created_at: str = Field(description="ISO-8601 UTC.")
    updated_at: str = Field(description="ISO-8601 UTC.")


class DocumentHit(BaseModel):
    key: str
    text: str
    score: float
    metadata: dict[str, Any]


class DocumentHits(BaseModel):
    name: str
    items: list[DocumentHit]


class DocumentKeys(BaseModel):
    name: str
    items: list[str]


class Deleted(BaseModel):
    name: str
    key: str
    deleted: bool


def _cache(mem: Any, name: str) -> SemanticCache:
    return SemanticCache(mem.engine, name, embedder=default_embedder())


def _documents(mem: Any, name: str) -> DocumentStore:
    return DocumentStore(mem.engine, name)


# -- cache -----------------------------------------------------------------------------------
@router.post(
    "/{name}/cache/lookup", response_model=LookupOut, summary="Look a query up (counts a hit or miss)"
)
def lookup(mem: TenantMemory, name: str, body: LookupIn) -> LookupOut:
    cache = _cache(mem, name)
    found = cache.lookup(cache.embed(body.query), body.threshold)
    cache.count(found is not None)
    return LookupOut(name=name, hit=found is not None, entry=None if found is None else CacheEntry(**found))


@router.post(
    "/{name}/cache/entries",
    response_model=Stored,
    status_code=status.HTTP_201_CREATED,
    summary="Store an answer for a query",
)
def store(mem: TenantMemory, name: str, body: StoreIn) -> Stored:
    entry_id = _cache(mem, name).store(
        body.query, body.response, body.metadata, body.ttl, subject=body.subject
    )
    return Stored(name=name, id=entry_id)


@router.post("/{name}/cache/search", response_model=CacheHits, summary="Stored entries nearest a query")
def search(mem: TenantMemory, name: str, body: SearchIn) -> CacheHits:
    items = _cache(mem, name).search(body.query, body.limit)
    return CacheHits(name=name, items=[CacheEntry(**e) for e in items])


@router.post("/{name}/cache/invalidate", response_model=Count, summary="Delete entries similar to a query")
def invalidate(mem: TenantMemory, name: str, body: InvalidateIn) -> Count:
    count = _cache(mem, name).invalidate(body.query, threshold=body.threshold, limit=body.limit)
    return Count(name=name, count=count)


@router.get("/{name}/cache/stats", response_model=Stats, summary="Hits, misses, hit rate, live entries")
def stats(mem: TenantMemory, name: str) -> Stats:
    return Stats(name=name, **_cache(mem, name).stats())


@router.delete("/{name}/cache", response_model=Stats, summary="Delete every entry and reset the counters")
def clear(mem: TenantMemory, name: str) -> Stats:
    cache = _cache(mem, name)
    cache.clear()
    return Stats(name=name, **cache.stats())


# -- documents -------------------------------------------------------------------------------
@router.get("/{name}/documents", response_model=DocumentKeys, summary="Keys of the stored documents")
def document_keys(mem: TenantMemory, name: str) -> DocumentKeys:
    return DocumentKeys(name=name, items=_documents(mem, name).keys())


@router.post("/{name}/documents/search", response_model=DocumentHits, summary="Documents nearest a query")
def search_documents(mem: TenantMemory, name: str, body: SearchIn) -> DocumentHits:
    hits = _documents(mem, name).search(body.query, body.limit)
    return DocumentHits(name=name, items=[DocumentHit(**h) for h in hits])


@router.put("/{name}/documents/{key}", response_model=Document, summary="Store (or replace) a document")
def store_document(mem: TenantMemory, name: str, key: DocKey, body: DocumentIn) -> Document:
    documents = _documents(mem, name)
    documents.store(key, body.content, body.metadata, subject=body.subject)
    return _document(documents, name, key)


@router.get("/{name}/documents/{key}", response_model=Document, summary="One document")
def get_document(mem: TenantMemory, name: str, key: DocKey) -> Document:
    return _document(_documents(mem, name), name, key)


@router.delete("/{name}/documents/{key}", response_model=Deleted, summary="Delete a document")
def delete_document(mem: TenantMemory, name: str, key: DocKey) -> Deleted:
    if not _documents(mem, name).delete(key):
        raise EntryNotFound(f"shared memory {name!r} has no document {key!r}")
    return Deleted(name=name, key=key, deleted=True)


def _document(documents: DocumentStore, name: str, key: str) -> Document:
    doc = documents.get(key)
    if doc is None:
        raise EntryNotFound(f"shared memory {name!r} has no document {key!r}")
    return Document.model_validate(document_json(name, doc))
