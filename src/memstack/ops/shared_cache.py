"""Operations of a board's semantic cache and document store.

The doors have no chat model to call, so the cache's ``fetch`` is split in two: ``lookup`` answers
a hit (and counts it) or a miss (counted too), after which the caller asks its model and ``store``s
the answer. The cache embeds with :func:`~memstack.shared.cache.default_embedder`; documents are
searched by BM25.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field
from typing_extensions import TypedDict

from .._memory import Memory

if TYPE_CHECKING:
    from ..shared.cache import SemanticCache
    from ..shared.documents import DocumentStore
from ..errors import EntryNotFound
from ..wire import DocumentJSON, document_json
from .fields import Board, Json, Metadata
from .spec import Cli, Http, Op, Request, Tool

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


class Search(Request):
    name: Board
    query: str = Query
    limit: int = Field(5, ge=1, le=100, description="Most results (1-100).")


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


class OneDocument(Request):
    name: Board
    key: str = DocKey


def _cache(mem: Memory, name: str) -> SemanticCache:
    from ..shared.cache import SemanticCache, default_embedder

    return SemanticCache(mem.engine, name, embedder=default_embedder())


def _documents(mem: Memory, name: str) -> DocumentStore:
    from ..shared.documents import DocumentStore

    return DocumentStore(mem.engine, name)


def _entry(found: dict[str, Any]) -> CacheEntry:
    return {
        "id": found["id"],
        "query": found["query"],
        "response": found["response"],
        "similarity": found["similarity"],
        "metadata": found["metadata"],
    }


def _lookup(mem: Memory, r: LookUp) -> Lookup:
    cache = _cache(mem, r.name)
    found = cache.lookup(cache.embed(r.query), r.threshold)
    cache.count(found is not None)
    return {"name": r.name, "hit": found is not None, "entry": None if found is None else _entry(found)}


def _store(mem: Memory, r: Store) -> Stored:
    return {"name": r.name, "id": _cache(mem, r.name).store(r.query, r.response, r.metadata or {}, r.ttl)}


def _search(mem: Memory, r: Search) -> CacheHits:
    return {"name": r.name, "items": [_entry(e) for e in _cache(mem, r.name).search(r.query, r.limit)]}


def _invalidate(mem: Memory, r: Invalidate) -> Count:
    count = _cache(mem, r.name).invalidate(r.query, threshold=r.threshold, limit=r.limit)
    return {"name": r.name, "count": count}


def _stats(mem: Memory, r: OneBoard) -> Stats:
    stats = _cache(mem, r.name).stats()
    return {
        "name": r.name,
        "hits": stats["hits"],
        "misses": stats["misses"],
        "hit_rate": stats["hit_rate"],
        "entries": stats["entries"],
    }


def _clear(mem: Memory, r: OneBoard) -> Stats:
    _cache(mem, r.name).clear()
    return _stats(mem, r)


def _document_keys(mem: Memory, r: OneBoard) -> DocumentKeys:
    return {"name": r.name, "items": _documents(mem, r.name).keys()}


def _document_search(mem: Memory, r: Search) -> DocumentHits:
    hits = _documents(mem, r.name).search(r.query, r.limit)
    items: list[DocumentHit] = [
        {"key": h["key"], "text": h["text"], "score": h["score"], "metadata": h["metadata"]} for h in hits
    ]
    return {"name": r.name, "items": items}


def _document_get(mem: Memory, r: OneDocument) -> DocumentJSON:
    doc = _documents(mem, r.name).get(r.key)
    if doc is None:
        raise EntryNotFound(f"shared memory {r.name!r} has no document {r.key!r}")
    return document_json(r.name, doc)


def _document_put(mem: Memory, r: PutDocument) -> DocumentJSON:
    _documents(mem, r.name).store(r.key, r.content, r.metadata)
    return _document_get(mem, OneDocument(name=r.name, key=r.key))


def _document_delete(mem: Memory, r: OneDocument) -> Deleted:
    if not _documents(mem, r.name).delete(r.key):
        raise EntryNotFound(f"shared memory {r.name!r} has no document {r.key!r}")
    return {"name": r.name, "key": r.key, "deleted": True}


_CACHE = "/v1/shared/{name}/cache"
_DOCS = "/v1/shared/{name}/documents"


OPS: tuple[Op[Any], ...] = (
    Op(
        "cache.lookup",
        "Find a cached answer to a similar earlier question (counts a hit or a miss).",
        LookUp,
        _lookup,
        Lookup,
        "mem.shared(name).cache.lookup(...)",
        http=(Http("POST", _CACHE + "/lookup"),),
        cli=Cli("shared", "cache-lookup", args=("name", "query")),
        tool=Tool("cache_lookup"),
    ),
    Op(
        "cache.store",
        "Cache an answer to a question for later lookups.",
        Store,
        _store,
        Stored,
        "mem.shared(name).cache.store(query, response)",
        http=(Http("POST", _CACHE + "/entries", status=201),),
        cli=Cli("shared", "cache-store", args=("name", "query", "response")),
        tool=Tool("cache_store"),
    ),
    Op(
        "cache.search",
        "Stored cache entries nearest a query, best first.",
        Search,
        _search,
        CacheHits,
        "mem.shared(name).cache.search(query)",
        http=(Http("POST", _CACHE + "/search"),),
        cli=Cli("shared", "cache-search", args=("name", "query")),
    ),
    Op(
        "cache.invalidate",
        "Delete cache entries similar to a query.",
        Invalidate,
        _invalidate,
        Count,
        "mem.shared(name).cache.invalidate(query)",
        http=(Http("POST", _CACHE + "/invalidate"),),
        cli=Cli("shared", "cache-invalidate", args=("name", "query")),
    ),
    Op(
        "cache.stats",
        "Hits, misses, hit rate and live entries of a cache.",
        OneBoard,
        _stats,
        Stats,
        "mem.shared(name).cache.stats()",
        http=(Http("GET", _CACHE + "/stats"),),
        cli=Cli("shared", "cache-stats", args=("name",)),
        tool=Tool("cache_stats"),
    ),
    Op(
        "cache.clear",
        "Delete every cache entry and reset the counters.",
        OneBoard,
        _clear,
        Stats,
        "mem.shared(name).cache.clear()",
        http=(Http("DELETE", _CACHE),),
        cli=Cli("shared", "cache-clear", args=("name",)),
    ),
    Op(
        "documents.keys",
        "Keys of the stored documents.",
        OneBoard,
        _document_keys,
        DocumentKeys,
        "mem.shared(name).document_keys()",
        http=(Http("GET", _DOCS),),
        cli=Cli("shared", "doc-keys", args=("name",)),
        tool=Tool("document_keys"),
    ),
    Op(
        "documents.search",
        "Search stored documents, best match first.",
        Search,
        _document_search,
        DocumentHits,
        "mem.shared(name).search_documents(query)",
        http=(Http("POST", _DOCS + "/search"),),
        cli=Cli("shared", "doc-search", args=("name", "query")),
        tool=Tool("document_search"),
    ),
    Op(
        "documents.put",
        "Store (or replace) a text document under a key.",
        PutDocument,
        _document_put,
        DocumentJSON,
        "mem.shared(name).store_document(key, content)",
        http=(Http("PUT", _DOCS + "/{key}"),),
        cli=Cli("shared", "doc-put", args=("name", "key", "content")),
        tool=Tool("document_store"),
    ),
    Op(
        "documents.get",
        "One stored document with its metadata and times.",
        OneDocument,
        _document_get,
        DocumentJSON,
        "mem.shared(name).documents.get(key)",
        http=(Http("GET", _DOCS + "/{key}"),),
        cli=Cli("shared", "doc-get", args=("name", "key")),
        tool=Tool("document_get"),
    ),
    Op(
        "documents.delete",
        "Delete a stored document.",
        OneDocument,
        _document_delete,
        Deleted,
        "mem.shared(name).delete_document(key)",
        http=(Http("DELETE", _DOCS + "/{key}"),),
        cli=Cli("shared", "doc-delete", args=("name", "key")),
        tool=Tool("document_delete"),
    ),
)
