"""Operations of long-term memory: save, search, read, delete, and the scopes, categories and tags."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from typing_extensions import TypedDict

from .._memory import Memory
from ..errors import EntryNotFound
from ..longterm.search_params import SearchParams
from ..wire import HitJSON, MemoryJSON, hit_json, memory_json
from .fields import Metadata, Scope, Subject, Tags
from .paging import Page, PageRequest, page_of
from .spec import Cli, Http, Op, Request, Tool

__all__ = ["OPS", "SearchMemories"]

_SCOPED = ("scope",)
MemoryId = Field(max_length=128, description="A memory id.")
Profile = Literal["default", "plain", "conversation", "rm3", "rocchio", "rockbot"]


class Hits(TypedDict):
    items: list[HitJSON]


class Names(TypedDict):
    items: list[str]


class Deleted(TypedDict):
    id: str
    deleted: bool


class ListScopes(PageRequest):
    """Which page of the scopes that hold memories."""


class SaveMemory(Request):
    scope: Scope = "default"
    id: str | None = Field(None, max_length=128, description="Save under this id (an update when it exists).")
    content: str = Field(description="The fact or preference (non-blank).")
    category: str | None = Field(None, max_length=512, description="A path such as user-preferences/music.")
    tags: Tags = Field(None, description="Tags: a list, or one comma-separated text.")
    metadata: Metadata = None
    subject: Subject = None


class SearchMemories(SearchParams, Request):
    scope: Scope = "default"
    profile: Profile = Field(
        "default",
        description="Search profile: default, plain, conversation, rm3, rocchio or rockbot (the original's).",
    )


class OneMemory(Request):
    scope: Scope = "default"
    id: str = MemoryId


class OfScope(Request):
    scope: Scope = "default"


def _scopes(mem: Memory, r: ListScopes) -> Page:
    from ..longterm import list_scopes

    return page_of(list_scopes(mem.engine), r)


def _save(mem: Memory, r: SaveMemory) -> MemoryJSON:
    entry = mem.long_term(r.scope).save(
        id=r.id, content=r.content, category=r.category, tags=r.tags, metadata=r.metadata, subject=r.subject
    )
    return memory_json(entry)


def _search(mem: Memory, r: SearchMemories) -> Hits:
    memories = mem.long_term(r.scope) if r.profile == "default" else mem.long_term(r.scope, profile=r.profile)
    return {"items": [hit_json(h) for h in memories.search(**SearchParams.options(r))]}


def _get(mem: Memory, r: OneMemory) -> MemoryJSON:
    entry = mem.long_term(r.scope).get(r.id)
    if entry is None:
        raise EntryNotFound(f"no memory {r.id!r} in scope {r.scope!r}")
    return memory_json(entry)


def _delete(mem: Memory, r: OneMemory) -> Deleted:
    if not mem.long_term(r.scope).delete(r.id):
        raise EntryNotFound(f"no memory {r.id!r} in scope {r.scope!r}")
    return {"id": r.id, "deleted": True}


def _categories(mem: Memory, r: OfScope) -> Names:
    return {"items": mem.long_term(r.scope).list_categories()}


def _tags(mem: Memory, r: OfScope) -> Names:
    return {"items": mem.long_term(r.scope).list_tags()}


_ONE = "/v1/memories/{id}"

OPS: tuple[Op[Any], ...] = (
    Op(
        "memories.scopes",
        "List the scopes that hold memories (sorted, paged).",
        ListScopes,
        _scopes,
        Page,
        "memstack.longterm.list_scopes(mem.engine)",
        http=(Http("GET", "/v1/memory-scopes"),),
        cli=Cli("memories", "scopes"),
        tool=Tool("list_memory_scopes"),
    ),
    Op(
        "memories.save",
        "Save a memory (an update when the id exists).",
        SaveMemory,
        _save,
        MemoryJSON,
        "mem.long_term(scope).save(content=...)",
        http=(Http("POST", "/v1/memories", status=201, query=_SCOPED), Http("PUT", _ONE, query=_SCOPED)),
        cli=Cli("memories", "save", args=("content",)),
    ),
    Op(
        "memories.search",
        "Search memories (BM25; hybrid with an embedder); a blank query lists the newest.",
        SearchMemories,
        _search,
        Hits,
        "mem.long_term(scope).search(query)",
        http=(Http("GET", "/v1/memories"),),
        cli=Cli("memories", "search", args=("query",)),
    ),
    Op(
        "memories.get",
        "One memory.",
        OneMemory,
        _get,
        MemoryJSON,
        "mem.long_term(scope).get(id)",
        http=(Http("GET", _ONE),),
        cli=Cli("memories", "get", args=("id",)),
    ),
    Op(
        "memories.delete",
        "Delete a memory.",
        OneMemory,
        _delete,
        Deleted,
        "mem.long_term(scope).delete(id)",
        http=(Http("DELETE", _ONE),),
        cli=Cli("memories", "delete", args=("id",)),
    ),
    Op(
        "memories.categories",
        "The categories in use in a scope.",
        OfScope,
        _categories,
        Names,
        "mem.long_term(scope).list_categories()",
        http=(Http("GET", "/v1/memory-categories"),),
        cli=Cli("memories", "categories"),
    ),
    Op(
        "memories.tags",
        "The tags in use in a scope.",
        OfScope,
        _tags,
        Names,
        "mem.long_term(scope).list_tags()",
        http=(Http("GET", "/v1/memory-tags"),),
        cli=Cli("memories", "tags"),
    ),
)
