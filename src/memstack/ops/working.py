"""Operations of working memory: path keys with TTLs, a cap per namespace.

Reads cross namespaces: a full key (``patrol/heartbeat/alerts``) works anywhere, a plain key needs
the namespace it belongs to. Writes need ``namespace``: the one namespace they may write to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Final

from pydantic import Field
from typing_extensions import TypedDict

from .._memory import Memory

if TYPE_CHECKING:
    from ..working import WorkingMemory
from ..errors import EntryNotFound, InvalidKey
from ..wire import WorkingJSON, working_json
from .fields import Json, Subject, Tags
from .paging import Page, PageRequest, page_of
from .spec import Cli, Http, Op, Request, Tool

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
    query: str | None = Field(None, max_length=4000, description="Words to search for; absent: the newest.")
    category: str | None = Field(None, max_length=300, description="That category or a sub-category.")
    tags: Tags = Field(None, description="Tags that must all be present: a list or 'a, b'.")
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
    ttl_seconds: float | None = Field(None, gt=0, description="Seconds to live (default 300).")
    category: str | None = Field(None, max_length=300, description="A category path.")
    tags: Tags = Field(None, description="Tags: a list or 'a, b'.")
    subject: Subject = None


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


def _namespaces(mem: Memory, r: ListNamespaces) -> Page:
    from ..working import list_namespaces

    return page_of(list_namespaces(mem.engine, r.prefix or ""), r)


def _list(mem: Memory, r: ListEntries) -> Entries:
    entries = _reader(mem, r.namespace).list(_target(r.prefix, r.namespace), with_values=False)
    return {"items": [working_json(e) for e in entries]}


def _search(mem: Memory, r: SearchEntries) -> Entries:
    found = _reader(mem, r.namespace).search(
        r.query, category=r.category, tags=r.tags, prefix=_target(r.prefix, r.namespace), max_results=r.limit
    )
    return {"items": [working_json(e) for e in found]}


def _clear(mem: Memory, r: ClearEntries) -> Cleared:
    return {"cleared": _writer(mem, r.namespace).clear(r.prefix)}


def _set(mem: Memory, r: SetEntry) -> WorkingJSON:
    entry = _writer(mem, r.namespace).set(
        r.key, r.value, ttl=r.ttl_seconds, category=r.category, tags=r.tags, subject=r.subject
    )
    return working_json(entry)


def _get(mem: Memory, r: OneEntry) -> WorkingJSON:
    entry = _reader(mem, r.namespace, r.key).get(r.key)
    if entry is None:
        raise EntryNotFound(f"working-memory entry {r.key!r} not found or has expired")
    return working_json(entry)


def _delete(mem: Memory, r: OneEntry) -> Deleted:
    if not _writer(mem, r.namespace).delete(r.key):
        raise EntryNotFound(f"working-memory entry {r.key!r} not found or has expired")
    return {"key": r.key, "deleted": True}


_NS = {"namespace": ("--namespace", "-n")}
_ENTRY = "/v1/working/{key:path}"

OPS: tuple[Op[Any], ...] = (
    Op(
        "working.namespaces",
        "List the namespaces holding live entries (sorted, paged).",
        ListNamespaces,
        _namespaces,
        Page,
        "memstack.working.list_namespaces(mem.engine)",
        http=(Http("GET", "/v1/working-namespaces"),),
        cli=Cli("working", "namespaces", args=("prefix",)),
        tool=Tool("list_working_namespaces"),
    ),
    Op(
        "working.list",
        "List live entries under a prefix with expiry, category and tags (never values).",
        ListEntries,
        _list,
        Entries,
        "mem.working(namespace).list(prefix, with_values=False)",
        http=(Http("GET", "/v1/working-keys"),),
        cli=Cli("working", "list", args=("prefix",), names=_NS),
    ),
    Op(
        "working.search",
        "Search entries by BM25 over key, value, tags and category (newest first without a query).",
        SearchEntries,
        _search,
        Entries,
        "mem.working(namespace).search(query)",
        http=(Http("GET", "/v1/working"),),
        cli=Cli("working", "search", args=("query",), names={**_NS, "limit": ("--limit", "--max-results")}),
    ),
    Op(
        "working.clear",
        "Delete the namespace's entries under a prefix (all without one).",
        ClearEntries,
        _clear,
        Cleared,
        "mem.working(namespace).clear(prefix)",
        http=(Http("DELETE", "/v1/working"),),
        cli=Cli("working", "clear", names=_NS),
    ),
    Op(
        "working.set",
        "Store an entry in the namespace (JSON value, TTL, category, tags).",
        SetEntry,
        _set,
        WorkingJSON,
        "mem.working(namespace).set(key, value)",
        http=(Http("PUT", _ENTRY, query=("namespace",)),),
        cli=Cli("working", "set", args=("key", "value"), names={**_NS, "ttl_seconds": ("--ttl",)}),
    ),
    Op(
        "working.get",
        "Read an entry (a plain key of the namespace, or a full path).",
        OneEntry,
        _get,
        WorkingJSON,
        "mem.working(namespace).get(key)",
        http=(Http("GET", _ENTRY),),
        cli=Cli("working", "get", args=("key",), names=_NS),
    ),
    Op(
        "working.delete",
        "Delete an entry of the namespace.",
        OneEntry,
        _delete,
        Deleted,
        "mem.working(namespace).delete(key)",
        http=(Http("DELETE", _ENTRY),),
        cli=Cli("working", "delete", args=("key",), names=_NS),
    ),
)
