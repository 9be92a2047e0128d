"""Operations of working memory: path keys with TTLs, a cap per namespace.

Reads cross namespaces: a full key (``patrol/heartbeat/alerts``) works anywhere, a plain key needs
the namespace it belongs to. Writes need ``namespace``: the one namespace they may write to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Final

from pydantic import Field
from typing_extensions import TypedDict

from ..services.memory import Memory

if TYPE_CHECKING:
    from ..tiers.working import WorkingMemory
from ..foundation.errors import EntryNotFound, InvalidKey
from ..tiers.working.namespaces import list_namespaces
from ..tiers.working.requests import RULES
from ..tiers.working.requests import SearchEntries as SearchRequest
from ..tiers.working.requests import SetEntry as SetRequest
from .fields import Json, Tags
from .paging import Page, PageRequest, page_of
from .spec import Ops, Request, cli, http
from .wire import WorkingJSON, working_json

__all__ = ["OPS"]

# Reads bind to a namespace too; without one, a namespace no writer uses (only full keys resolve).
_READER: Final = "cli/read-only"
Namespace = Annotated[
    str | None, Field(max_length=300, description="The namespace plain keys belong to, e.g. session/abc.")
]
Prefix = Annotated[
    str | None, Field(max_length=300, description="Whole-segment prefix (patrol, session/abc); default: all.")
]
Key = Field(max_length=512, description="A plain key of the namespace, or a full path.")


def _rule(name: str) -> Any:
    """A door field showing the tier's rule ``name`` (its description and JSON-schema bounds); the
    handler builds the tier's request, whose check is the only one (one error on every door)."""
    rule = RULES[name]
    return Field(None, description=rule.doc, json_schema_extra=dict(rule.json))


class Entries(TypedDict):
    items: list[WorkingJSON]


class Cleared(TypedDict):
    cleared: int


class Deleted(TypedDict):
    key: str
    deleted: bool


class ListNamespaces(PageRequest):
    prefix: Prefix = None


class ListEntries(Request):
    prefix: Prefix = None
    namespace: Namespace = None


class SearchEntries(Request):
    query: str | None = Field(None, max_length=4000, description=RULES["query"].doc)
    category: str | None = _rule("filter_category")
    tags: Tags = _rule("filter_tags")
    prefix: Prefix = None
    namespace: Namespace = None
    limit: int = Field(20, ge=1, le=500, description="Most entries (1-500).")


class ClearEntries(Request):
    namespace: Namespace = None
    prefix: Prefix = None


class SetEntry(Request):
    key: str = Key
    value: Json
    namespace: Namespace = None
    ttl: int | float | None = _rule("ttl")  # an int stays one, so messages name the value given
    category: str | None = _rule("category")
    tags: Tags = _rule("tags")
    subject: str | None = _rule("subject")


class OneEntry(Request):
    key: str = Key
    namespace: Namespace = None


def _reader(mem: Memory, namespace: str | None, key: str | None = None) -> WorkingMemory:
    if namespace is None and key is not None and "/" not in key:
        raise InvalidKey(f"key {key!r} is plain: give its full path or the namespace it belongs to")
    return mem.working(namespace or _READER)


def _writer(mem: Memory, namespace: str | None) -> WorkingMemory:
    if namespace is None:
        raise InvalidKey("writing needs a namespace (e.g. session/abc): writes go to one namespace only")
    return mem.working(namespace)


def _target(prefix: str | None, namespace: str | None) -> str:
    return prefix if prefix is not None else (namespace or "")


ops = Ops()
_NS = {"namespace": ("--namespace", "-n")}
_ENTRY = "/v1/working/{key:path}"


@ops(
    "working.namespaces", "memstack.tiers.working.list_namespaces(mem.engine)", tool="list_working_namespaces"
)
@http("GET /v1/working-namespaces")
@cli("working namespaces PREFIX")
def _namespaces(mem: Memory, r: ListNamespaces) -> Page:
    """List the namespaces holding live entries (sorted, paged)."""
    return page_of(list_namespaces(mem.engine, r.prefix or ""), r)


@ops("working.list", "mem.working(namespace).list(prefix, with_values=False)")
@http("GET /v1/working-keys")
@cli("working list PREFIX", names=_NS)
def _list(mem: Memory, r: ListEntries) -> Entries:
    """List live entries under a prefix with expiry, category and tags (never values)."""
    entries = _reader(mem, r.namespace).list(_target(r.prefix, r.namespace), with_values=False)
    return {"items": [working_json(e) for e in entries]}


@ops("working.search", "mem.working(namespace).search(query)")
@http("GET /v1/working")
@cli("working search QUERY", names={**_NS, "limit": ("--limit", "--max-results")})
def _search(mem: Memory, r: SearchEntries) -> Entries:
    """Search entries by BM25 over key, value, tags and category (newest first without a query)."""
    prefix = _target(r.prefix, r.namespace)
    request = SearchRequest.of(
        query=r.query, category=r.category, tags=r.tags, prefix=prefix, max_results=r.limit
    )
    found = _reader(mem, r.namespace).find(request)
    return {"items": [working_json(e) for e in found]}


@ops("working.clear", "mem.working(namespace).clear(prefix)")
@http("DELETE /v1/working")
@cli("working clear", names=_NS)
def _clear(mem: Memory, r: ClearEntries) -> Cleared:
    """Delete the namespace's entries under a prefix (all without one)."""
    return {"cleared": _writer(mem, r.namespace).clear(r.prefix)}


@ops("working.set", "mem.working(namespace).set(key, value)")
@http("PUT " + _ENTRY, query=("namespace",))
@cli("working set KEY VALUE", names=_NS)
def _set(mem: Memory, r: SetEntry) -> WorkingJSON:
    """Store an entry in the namespace (JSON value, TTL, category, tags)."""
    request = SetRequest.of(r.key, r.value, ttl=r.ttl, category=r.category, tags=r.tags, subject=r.subject)
    return working_json(_writer(mem, r.namespace).put(request))


@ops("working.get", "mem.working(namespace).get(key)")
@http("GET " + _ENTRY)
@cli("working get KEY", names=_NS)
def _get(mem: Memory, r: OneEntry) -> WorkingJSON:
    """Read an entry (a plain key of the namespace, or a full path)."""
    entry = _reader(mem, r.namespace, r.key).get(r.key)
    if entry is None:
        raise EntryNotFound(f"working-memory entry {r.key!r} not found or has expired")
    return working_json(entry)


@ops("working.delete", "mem.working(namespace).delete(key)")
@http("DELETE " + _ENTRY)
@cli("working delete KEY", names=_NS)
def _delete(mem: Memory, r: OneEntry) -> Deleted:
    """Delete an entry of the namespace."""
    if not _writer(mem, r.namespace).delete(r.key):
        raise EntryNotFound(f"working-memory entry {r.key!r} not found or has expired")
    return {"key": r.key, "deleted": True}


OPS = tuple(ops.all)
