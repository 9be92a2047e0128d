"""Operations of a board's semantic cache and document store.

The doors have no chat model to call, so the cache's ``fetch`` is split in two: ``lookup`` answers
a hit (and counts it) or a miss (counted too), after which the caller asks its model and ``store``s
the answer. The cache embeds with :func:`~memstack.tiers.shared.cache.default_embedder`; documents are
searched by BM25.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field
from typing_extensions import TypedDict

from ..services.memory import Memory

if TYPE_CHECKING:
    from ..tiers.shared.cache import SemanticCache
    from ..tiers.shared.documents import DocumentStore
from ..foundation.errors import EntryNotFound
from ..foundation.limits import MAX_SEARCH_OFFSET
from .fields import Json, Metadata, Subject
from .shared import Board
from .spec import Ops, Request, cli, http
from .wire import DocumentJSON, document_json

__all__ = ["OPS"]

Query = Field(max_length=100_000, description="The question (cache) or words (documents) to look for.")
Threshold = Field(None, ge=0, le=1, description="Least similarity (default 0.92).")
DocKey = Field(min_length=1, max_length=256, description="The document's key.")


class CacheEntry(TypedDict):
    id: str
    query: str
    response: Any
    similarity: float
    metadata: dict[str, Any]


class Lookup(TypedDict):
    name: str
    hit: bool
    entry: CacheEntry | None


class Stored(TypedDict):
    name: str
    id: str


class CacheHits(TypedDict):
    name: str
    items: list[CacheEntry]


class Count(TypedDict):
    name: str
    count: int


class Stats(TypedDict):
    name: str
    hits: int
    misses: int
    hit_rate: float
    entries: int


class DocumentHit(TypedDict):
    key: str
    text: str
    score: float
    metadata: dict[str, Any]


class DocumentHits(TypedDict):
    name: str
    items: list[DocumentHit]


class DocumentKeys(TypedDict):
    name: str
    items: list[str]


class Deleted(TypedDict):
    name: str
    key: str
    deleted: bool


class OneBoard(Request):
    name: Board


class LookUp(Request):
    name: Board
    query: str = Query
    threshold: float | None = Threshold


class Store(Request):
    name: Board
    query: str = Query
    response: Json
    metadata: Metadata = None
    ttl: float | None = Field(None, gt=0, description="Seconds to keep it; absent keeps it forever.")
    subject: Subject = None


class Search(Request):
    name: Board
    query: str = Query
    limit: int = Field(5, ge=1, le=100, description="Most results (1-100).")


class SearchDocuments(Search):
    filter: dict[str, Any] | None = Field(
        None,
        description='The filter language over the metadata: {"field": value} or {"field": {"$gte": 3}}.',
    )
    offset: int = Field(
        0, ge=0, le=MAX_SEARCH_OFFSET, description=f"Hits to skip first, for paging (0-{MAX_SEARCH_OFFSET})."
    )


class Invalidate(Request):
    name: Board
    query: str = Query
    threshold: float | None = Threshold
    limit: int = Field(100, ge=1, le=10_000, description="Most entries deleted (1-10000).")


class PutDocument(Request):
    name: Board
    key: str = DocKey
    content: str = Field(max_length=1_000_000, description="The document's text.")
    metadata: Metadata = None
    subject: Subject = None


class OneDocument(Request):
    name: Board
    key: str = DocKey


def _cache(mem: Memory, name: str) -> SemanticCache:
    from ..tiers.shared.cache import SemanticCache, default_embedder

    return SemanticCache(mem.engine, name, embedder=default_embedder())


def _documents(mem: Memory, name: str) -> DocumentStore:
    from ..tiers.shared.documents import DocumentStore

    return DocumentStore(mem.engine, name)


def _entry(found: dict[str, Any]) -> CacheEntry:
    return {
        "id": found["id"],
        "query": found["query"],
        "response": found["response"],
        "similarity": found["similarity"],
        "metadata": found["metadata"],
    }


ops = Ops()
_CACHE = "/v1/shared/{name}/cache"
_DOCS = "/v1/shared/{name}/documents"


@ops("cache.lookup", "mem.shared(name).cache.lookup(...)", tool="cache_lookup")
@http("POST " + _CACHE + "/lookup")
@cli("shared cache-lookup NAME QUERY")
def _lookup(mem: Memory, r: LookUp) -> Lookup:
    """Find a cached answer to a similar earlier question (counts a hit or a miss)."""
    cache = _cache(mem, r.name)
    found = cache.lookup(cache.embed(r.query), r.threshold)
    cache.count(found is not None)
    return {"name": r.name, "hit": found is not None, "entry": None if found is None else _entry(found)}


@ops("cache.store", "mem.shared(name).cache.store(query, response)", tool="cache_store")
@http("POST " + _CACHE + "/entries", status=201)
@cli("shared cache-store NAME QUERY RESPONSE")
def _store(mem: Memory, r: Store) -> Stored:
    """Cache an answer to a question for later lookups."""
    return {
        "name": r.name,
        "id": _cache(mem, r.name).store(r.query, r.response, r.metadata or {}, r.ttl, subject=r.subject),
    }


@ops("cache.search", "mem.shared(name).cache.search(query)")
@http("POST " + _CACHE + "/search")
@cli("shared cache-search NAME QUERY")
def _search(mem: Memory, r: Search) -> CacheHits:
    """Stored cache entries nearest a query, best first."""
    return {"name": r.name, "items": [_entry(e) for e in _cache(mem, r.name).search(r.query, r.limit)]}


@ops("cache.invalidate", "mem.shared(name).cache.invalidate(query)")
@http("POST " + _CACHE + "/invalidate")
@cli("shared cache-invalidate NAME QUERY")
def _invalidate(mem: Memory, r: Invalidate) -> Count:
    """Delete cache entries similar to a query."""
    count = _cache(mem, r.name).invalidate(r.query, threshold=r.threshold, limit=r.limit)
    return {"name": r.name, "count": count}


@ops("cache.stats", "mem.shared(name).cache.stats()", tool="cache_stats")
@http("GET " + _CACHE + "/stats")
@cli("shared cache-stats NAME")
def _stats(mem: Memory, r: OneBoard) -> Stats:
    """Hits, misses, hit rate and live entries of a cache."""
    stats = _cache(mem, r.name).stats()
    return {
        "name": r.name,
        "hits": stats["hits"],
        "misses": stats["misses"],
        "hit_rate": stats["hit_rate"],
        "entries": stats["entries"],
    }


@ops("cache.clear", "mem.shared(name).cache.clear()")
@http("DELETE " + _CACHE)
@cli("shared cache-clear NAME")
def _clear(mem: Memory, r: OneBoard) -> Stats:
    """Delete every cache entry and reset the counters."""
    _cache(mem, r.name).clear()
    return _stats(mem, r)


@ops("documents.keys", "mem.shared(name).document_keys()", tool="document_keys")
@http("GET " + _DOCS)
@cli("shared doc-keys NAME")
def _document_keys(mem: Memory, r: OneBoard) -> DocumentKeys:
    """Keys of the stored documents."""
    return {"name": r.name, "items": _documents(mem, r.name).keys()}


@ops("documents.search", "mem.shared(name).search_documents(query)", tool="document_search")
@http("POST " + _DOCS + "/search")
@cli("shared doc-search NAME QUERY")
def _document_search(mem: Memory, r: SearchDocuments) -> DocumentHits:
    """Search stored documents, best match first (filter language over the metadata, paging)."""
    hits = _documents(mem, r.name).search(r.query, r.limit, filter=r.filter, offset=r.offset)
    items: list[DocumentHit] = [
        {"key": h["key"], "text": h["text"], "score": h["score"], "metadata": h["metadata"]} for h in hits
    ]
    return {"name": r.name, "items": items}


@ops("documents.put", "mem.shared(name).store_document(key, content)", tool="document_store")
@http("PUT " + _DOCS + "/{key}")
@cli("shared doc-put NAME KEY CONTENT")
def _document_put(mem: Memory, r: PutDocument) -> DocumentJSON:
    """Store (or replace) a text document under a key."""
    _documents(mem, r.name).store(r.key, r.content, r.metadata, subject=r.subject)
    return _document_get(mem, OneDocument(name=r.name, key=r.key))


@ops("documents.get", "mem.shared(name).documents.get(key)", tool="document_get")
@http("GET " + _DOCS + "/{key}")
@cli("shared doc-get NAME KEY")
def _document_get(mem: Memory, r: OneDocument) -> DocumentJSON:
    """One stored document with its metadata and times."""
    doc = _documents(mem, r.name).get(r.key)
    if doc is None:
        raise EntryNotFound(f"shared memory {r.name!r} has no document {r.key!r}")
    return document_json(r.name, doc)


@ops("documents.delete", "mem.shared(name).delete_document(key)", tool="document_delete")
@http("DELETE " + _DOCS + "/{key}")
@cli("shared doc-delete NAME KEY")
def _document_delete(mem: Memory, r: OneDocument) -> Deleted:
    """Delete a stored document."""
    if not _documents(mem, r.name).delete(r.key):
        raise EntryNotFound(f"shared memory {r.name!r} has no document {r.key!r}")
    return {"name": r.name, "key": r.key, "deleted": True}


OPS = tuple(ops.all)
