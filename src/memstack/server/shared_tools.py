"""Service tools for the semantic cache and the documents of shared memory (MCP and
``POST /v1/tools/{name}``), as ``(spec, handler)`` pairs joined to the dispatcher's helpers.

Like every service tool, a handler returns text: JSON for data, a sentence otherwise; failures
become ``Error:`` texts in the dispatcher. The cache embeds with the default embedder and the
documents are searched by BM25, as over HTTP (:mod:`memstack.server.routes.shared_cache`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from .._memory import Memory
from ..shared.cache import SemanticCache, default_embedder
from ..shared.documents import DocumentStore
from ..tools.schemas import ToolSpec
from ..wire import document_json

__all__ = ["SHARED_TOOLS"]

_NAME = Field(description="The shared memory (1-128 characters of [A-Za-z0-9_.-]).")


class CacheLookupArgs(BaseModel):
    name: str = _NAME
    query: str = Field(description="The question whose earlier answer is wanted.")
    threshold: float | None = Field(None, ge=0, le=1, description="Least similarity (default 0.92).")


class CacheStoreArgs(BaseModel):
    name: str = _NAME
    query: str = Field(description="The question answered.")
    response: Any = Field(description="The answer to keep (any JSON value).")
    ttl: float | None = Field(None, gt=0, description="Seconds to keep it (default: forever).")


class NameArgs(BaseModel):
    name: str = _NAME


class DocumentStoreArgs(BaseModel):
    name: str = _NAME
    key: str = Field(description="The document's key (replaces what it held).")
    content: str = Field(description="The document's text.")
    metadata: dict[str, Any] | None = Field(None, description="Any JSON object kept with it.")


class DocumentSearchArgs(BaseModel):
    name: str = _NAME
    query: str = Field(description="What to look for.")
    limit: int = Field(5, ge=1, le=50, description="Most documents to return.")


class DocumentKeyArgs(BaseModel):
    name: str = _NAME
    key: str = Field(description="The document's key.")


def _cache(mem: Memory, name: str) -> SemanticCache:
    return SemanticCache(mem.engine, name, embedder=default_embedder())


def _cache_lookup(mem: Memory, sid: str, a: CacheLookupArgs) -> str:
    cache = _cache(mem, a.name)
    found = cache.lookup(cache.embed(a.query), a.threshold)
    cache.count(found is not None)
    if found is None:
        return f"No cached answer in '{a.name}' for this query."
    return json.dumps(found, ensure_ascii=False)


def _cache_store(mem: Memory, sid: str, a: CacheStoreArgs) -> str:
    entry_id = _cache(mem, a.name).store(a.query, a.response, ttl=a.ttl)
    return f"Cached the answer in '{a.name}' as entry '{entry_id}'."


def _cache_stats(mem: Memory, sid: str, a: NameArgs) -> str:
    return json.dumps(_cache(mem, a.name).stats())


def _document_store(mem: Memory, sid: str, a: DocumentStoreArgs) -> str:
    DocumentStore(mem.engine, a.name).store(a.key, a.content, a.metadata)
    return f"Stored document '{a.key}' in '{a.name}'."


def _document_search(mem: Memory, sid: str, a: DocumentSearchArgs) -> str:
    return json.dumps(DocumentStore(mem.engine, a.name).search(a.query, a.limit), ensure_ascii=False)


def _document_keys(mem: Memory, sid: str, a: NameArgs) -> str:
    return json.dumps(DocumentStore(mem.engine, a.name).keys(), ensure_ascii=False)


def _document_get(mem: Memory, sid: str, a: DocumentKeyArgs) -> str:
    doc = DocumentStore(mem.engine, a.name).get(a.key)
    if doc is None:
        return f"No document '{a.key}' in '{a.name}'."
    return json.dumps(document_json(a.name, doc), ensure_ascii=False)


def _document_delete(mem: Memory, sid: str, a: DocumentKeyArgs) -> str:
    if DocumentStore(mem.engine, a.name).delete(a.key):
        return f"Deleted document '{a.key}' from '{a.name}'."
    return f"No document '{a.key}' in '{a.name}'."


_TABLE: tuple[tuple[ToolSpec, Callable[[Memory, str, Any], str]], ...] = (
    (
        ToolSpec("cache_lookup", "Find a cached answer to a similar earlier question.", CacheLookupArgs),
        _cache_lookup,
    ),
    (
        ToolSpec("cache_store", "Cache an answer to a question for later lookups.", CacheStoreArgs),
        _cache_store,
    ),
    (ToolSpec("cache_stats", "Hits, misses, hit rate and entries of a cache.", NameArgs), _cache_stats),
    (
        ToolSpec("document_store", "Store a text document under a key for later search.", DocumentStoreArgs),
        _document_store,
    ),
    (
        ToolSpec("document_search", "Search stored documents, best match first.", DocumentSearchArgs),
        _document_search,
    ),
    (ToolSpec("document_keys", "Keys of the stored documents.", NameArgs), _document_keys),
    (
        ToolSpec("document_get", "One stored document with its metadata and times.", DocumentKeyArgs),
        _document_get,
    ),
    (ToolSpec("document_delete", "Delete a stored document.", DocumentKeyArgs), _document_delete),
)

SHARED_TOOLS: dict[str, tuple[ToolSpec, Callable[[Memory, str, Any], str]]] = {
    spec.name: (spec, handler) for spec, handler in _TABLE
}
"""The cache and document tools by name, in the shape of :data:`memstack.server.toolbox.HELPERS`."""
