"""Operations of long-term memory: save, search, read, history, delete, and the scopes, categories
and tags."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field
from typing_extensions import TypedDict

from ..foundation.errors import EntryNotFound
from ..services.memory import Memory
from ..tiers.longterm.requests import RULES
from ..tiers.longterm.requests import SaveMemory as SaveRequest
from ..tiers.longterm.scopes import list_scopes
from ..tiers.longterm.search_params import SearchParams
from .fields import Ids, Metadata, Tags, Time, ruled
from .paging import Page, PageRequest, page_of
from .spec import Ops, Request, cli, http
from .wire import HitJSON, MemoryEventJSON, MemoryJSON, hit_json, memory_event_json, memory_json

__all__ = ["OPS", "SearchMemories"]

MAX_ITEMS: Final = 1000
"""Most memories one batch request saves (one transaction; a larger import sends several)."""
# The tier's rules, shown (not checked again): the handlers build the tier's requests.
Scope = Annotated[str, ruled(RULES["scope"])]
MemoryId = ruled(RULES["id"])
Profile = Literal["default", "plain", "conversation", "rm3", "rocchio", "rockbot"]


class Hits(TypedDict):
    items: list[HitJSON]


class Saved(TypedDict):
    items: list[MemoryJSON]


class Names(TypedDict):
    items: list[str]


class Changes(TypedDict):
    items: list[MemoryEventJSON]


class Deleted(TypedDict):
    id: str
    deleted: bool


class MemoryCount(TypedDict):
    scope: str
    stored: int
    current: int


class ListScopes(PageRequest):
    """Which page of the scopes that hold memories."""


class OfScope(Request):
    scope: Scope = "default"


class MemoryItem(Request):
    """One memory of a batch: the fields of a save."""

    id: str | None = ruled(RULES["save_id"], None)
    content: str = ruled(RULES["content"])
    category: str | None = ruled(RULES["category"], None)
    tags: Tags = ruled(RULES["tags"], None)
    metadata: Metadata = ruled(RULES["metadata"], None)
    subject: str | None = ruled(RULES["subject"], None)
    supersedes: Ids = ruled(RULES["supersedes"], None)
    valid_from: Time = ruled(RULES["valid_from"], None)
    expires_at: Time = ruled(RULES["expires_at"], None)
    ttl: int | float | None = ruled(RULES["ttl"], None)  # an int stays one, so messages name the value given


class SaveMemory(MemoryItem, OfScope):
    # No docstring: the schema keeps no description. The bases in this order list ``scope`` first.
    pass


class SaveMemories(Request):
    scope: Scope = "default"
    items: list[MemoryItem] = Field(
        min_length=1,
        max_length=MAX_ITEMS,
        description=f"The memories to save (1-{MAX_ITEMS}), each with the fields of a save.",
    )


class SearchMemories(SearchParams, Request):
    scope: Scope = "default"
    profile: Profile = Field(
        "default",
        description="Search profile: default, plain, conversation, rm3, rocchio or rockbot (the original's).",
    )


class OneMemory(Request):
    scope: Scope = "default"
    id: str = MemoryId


ops = Ops()
_ONE = "/v1/memories/{id}"
_SCOPED = ("scope",)


@ops("memories.scopes", "memstack.tiers.longterm.list_scopes(mem.engine)", tool="list_memory_scopes")
@http("GET /v1/memory-scopes")
@cli("memories scopes")
def _scopes(mem: Memory, r: ListScopes) -> Page:
    """List the scopes that hold memories (sorted, paged)."""
    return page_of(list_scopes(mem.engine), r)


@ops("memories.save", "mem.long_term(scope).save(content=...)")
@http("POST /v1/memories", status=201, query=_SCOPED)
@http("PUT " + _ONE, query=_SCOPED)
@cli("memories save CONTENT")
def _save(mem: Memory, r: SaveMemory) -> MemoryJSON:
    """Save a memory (an update when the id exists)."""
    # The request's fields beside the scope are the tier's save request's, name for name.
    memories = mem.long_term(r.scope)
    return memory_json(memories.put(SaveRequest.of(**r.model_dump(exclude={"scope"}))))


@ops("memories.save_many", "mem.long_term(scope).save_many(items)", tool="save_memories")
@http("POST /v1/memories/batch", status=201, query=_SCOPED)
@cli("memories save-many ITEMS")
def _save_many(mem: Memory, r: SaveMemories) -> Saved:
    """Save many memories in one transaction: all of them or, on any error, none."""
    items = [item.model_dump(exclude_unset=True) for item in r.items]
    return {"items": [memory_json(e) for e in mem.long_term(r.scope).save_many(items, batch_size=MAX_ITEMS)]}


@ops("memories.search", "mem.long_term(scope).search(query)")
@http("GET /v1/memories")
@cli("memories search QUERY")
def _search(mem: Memory, r: SearchMemories) -> Hits:
    """Search memories (BM25; hybrid with an embedder); a blank query lists the newest."""
    memories = mem.long_term(r.scope) if r.profile == "default" else mem.long_term(r.scope, profile=r.profile)
    return {"items": [hit_json(h) for h in memories.search(**SearchParams.options(r))]}


@ops("memories.get", "mem.long_term(scope).get(id)")
@http("GET " + _ONE)
@cli("memories get ID")
def _get(mem: Memory, r: OneMemory) -> MemoryJSON:
    """One memory."""
    entry = mem.long_term(r.scope).get(r.id)
    if entry is None:
        raise EntryNotFound(f"no memory {r.id!r} in scope {r.scope!r}")
    return memory_json(entry)


@ops("memories.history", "mem.long_term(scope).history(id)", tool="memory_history")
@http("GET " + _ONE + "/history")
@cli("memories history ID")
def _history(mem: Memory, r: OneMemory) -> Changes:
    """Every recorded change of a memory, oldest first: old and new version, op and actor."""
    return {"items": [memory_event_json(e) for e in mem.long_term(r.scope).history(r.id)]}


@ops("memories.delete", "mem.long_term(scope).delete(id)")
@http("DELETE " + _ONE)
@cli("memories delete ID")
def _delete(mem: Memory, r: OneMemory) -> Deleted:
    """Delete a memory."""
    if not mem.long_term(r.scope).delete(r.id):
        raise EntryNotFound(f"no memory {r.id!r} in scope {r.scope!r}")
    return {"id": r.id, "deleted": True}


@ops("memories.categories", "mem.long_term(scope).list_categories()")
@http("GET /v1/memory-categories")
@cli("memories categories")
def _categories(mem: Memory, r: OfScope) -> Names:
    """The categories in use in a scope."""
    return {"items": mem.long_term(r.scope).list_categories()}


@ops("memories.tags", "mem.long_term(scope).list_tags()")
@http("GET /v1/memory-tags")
@cli("memories tags")
def _tags(mem: Memory, r: OfScope) -> Names:
    """The tags in use in a scope."""
    return {"items": mem.long_term(r.scope).list_tags()}


@ops("memories.count", "len(mem.long_term(scope)); .current_count()", tool="count_memories")
@http("GET /v1/memory-count")
@cli("memories count")
def _count(mem: Memory, r: OfScope) -> MemoryCount:
    """How many memories a scope stores, and how many of them are current (what searches show)."""
    memories = mem.long_term(r.scope)
    return {"scope": r.scope, "stored": len(memories), "current": memories.current_count()}


OPS = tuple(ops.all)
