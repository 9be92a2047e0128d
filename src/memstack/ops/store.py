"""Operations of the LangGraph store: namespaced items with LangGraph's semantics, over HTTP.

Each operation is one LangGraph op run by :class:`memstack.agent.lgstore.MemstackStore` on the tenant's
engine, so a graph in another language (the TypeScript client's LangGraph.js store) and a Python
graph (``memstack.doors.integrations.langgraph.MemstackStore`` on the same engine) share one store. A
namespace is a list of labels; the rules are LangGraph's (a label is non-empty text without a
``.``; a put needs a namespace). The store needs the ``langgraph`` extra. Every route is a POST with
a JSON body: a get or a search may restart the TTL of what it reads (``refresh_ttl``), a write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from pydantic import Field
from typing_extensions import TypedDict

from ..foundation.errors import InvalidConfiguration, InvalidKey
from ..services.memory import Memory
from .fields import MAX_PAGE
from .spec import Ops, Request, http
from .wire import FoundJSON, ItemJSON, found_json, item_json

if TYPE_CHECKING:
    from langgraph.store.base import Op

__all__ = ["OPS"]

# memstack.agent.lgstore's MAX_TTL_MINUTES (100 years): importing it here would load LangGraph with the
# registry, which the server does not need until a store operation runs.
MAX_TTL_MINUTES: Final = 100 * 365 * 24 * 60

Label = Annotated[str, Field(max_length=256)]
Namespace = Annotated[
    list[Label], Field(max_length=64, description="The namespace: its labels, outermost first.")
]
Prefix = Annotated[
    list[Label] | None, Field(max_length=64, description="Labels the namespace starts with ('*': any label).")
]
ItemKey = Annotated[str, Field(min_length=1, max_length=1024, description="The item's key in its namespace.")]
RefreshTtl = Annotated[
    bool, Field(description="Restart the TTL of what is read (LangGraph's default: true).")
]


class Found(TypedDict):
    items: list[FoundJSON]


class Namespaces(TypedDict):
    namespaces: list[list[str]]


class Done(TypedDict):
    namespace: list[str]
    key: str


class PutItem(Request):
    namespace: Namespace
    key: ItemKey
    value: dict[str, Any] = Field(description="The item: a JSON object.")
    index: Literal[False] | list[str] | None = Field(
        None, description="Paths to embed (false: none; absent: the store's index fields)."
    )
    ttl: float | None = Field(
        None, gt=0, le=MAX_TTL_MINUTES, description="Minutes the item lives (absent: until deleted)."
    )


class GetItem(Request):
    namespace: Namespace
    key: ItemKey
    refresh_ttl: RefreshTtl = True


class SearchItems(Request):
    namespace_prefix: Namespace = Field(default_factory=list)
    query: str | None = Field(None, max_length=4000, description="Words to rank by (absent: newest first).")
    filter: dict[str, Any] | None = Field(
        None,
        description="Fields the value must match: a value, or operators ($eq, $ne, $gt, $gte, $lt, $lte).",
    )
    limit: int = Field(10, ge=1, le=MAX_PAGE, description=f"Most items (1-{MAX_PAGE}).")
    offset: int = Field(0, ge=0, description="Items to skip first.")
    refresh_ttl: RefreshTtl = True


class ListNamespaces(Request):
    prefix: Prefix = None
    suffix: Prefix = Field(None, description="Labels the namespace ends with ('*': any label).")
    max_depth: int | None = Field(None, ge=1, le=64, description="Cut namespaces to this many labels.")
    limit: int = Field(100, ge=1, le=MAX_PAGE, description=f"Most namespaces (1-{MAX_PAGE}).")
    offset: int = Field(0, ge=0, description="Namespaces to skip first.")


class DeleteItem(Request):
    namespace: Namespace
    key: ItemKey


def _run(mem: Memory, op: Op) -> Any:
    """Run one LangGraph op on the tenant's store; LangGraph's namespace errors become InvalidKey."""
    try:
        from langgraph.store.base import InvalidNamespaceError

        from ..agent.lgstore import MemstackStore
    except ImportError:  # pragma: no cover - every test environment has the extra
        raise InvalidConfiguration(
            "the store operations need the langgraph extra: pip install 'memstack[langgraph]'"
        ) from None
    try:
        # Over HTTP a query ranks by BM25 (memstack's ranking), as the JavaScript store's callers
        # expect; a Python MemstackStore without an index ignores it, as LangGraph's own stores do.
        return MemstackStore(mem, ranking="fused").batch([op])[0]
    except InvalidNamespaceError as error:
        raise InvalidKey(f"namespace: {error}") from None


def _listed(mem: Memory, op: Op) -> list[Any]:
    """Run a search or a namespace listing: LangGraph answers both with a list."""
    found = _run(mem, op)
    assert isinstance(found, list)
    return found


ops = Ops()


@ops("store.put", "MemstackStore(mem).put(namespace, key, value, index, ttl=ttl)")
@http("POST /v1/store/items")
def _put(mem: Memory, r: PutItem) -> Done:
    """Store an item in a namespace, replacing the key's item (LangGraph's put)."""
    from langgraph.store.base import PutOp

    _run(mem, PutOp(tuple(r.namespace), r.key, r.value, r.index, ttl=r.ttl))
    return {"namespace": r.namespace, "key": r.key}


@ops("store.get", "MemstackStore(mem).get(namespace, key)")
@http("POST /v1/store/items/get")
def _get(mem: Memory, r: GetItem) -> ItemJSON:
    """Read an item by namespace and key (EntryNotFound when there is none)."""
    from langgraph.store.base import GetOp

    from ..foundation.errors import EntryNotFound

    found = _run(mem, GetOp(tuple(r.namespace), r.key, refresh_ttl=r.refresh_ttl))
    if found is None:
        raise EntryNotFound(f"store item {r.key!r} not found in namespace {r.namespace!r}")
    return item_json(found)


@ops("store.search", "MemstackStore(mem).search(namespace_prefix, query=query, filter=filter)")
@http("POST /v1/store/items/search")
def _search(mem: Memory, r: SearchItems) -> Found:
    """Items under a namespace prefix, filtered, ranked by a query (LangGraph's search)."""
    from langgraph.store.base import SearchOp

    op = SearchOp(tuple(r.namespace_prefix), r.filter, r.limit, r.offset, r.query, refresh_ttl=r.refresh_ttl)
    return {"items": [found_json(hit) for hit in _listed(mem, op)]}


@ops("store.namespaces", "MemstackStore(mem).list_namespaces(prefix=prefix, suffix=suffix)")
@http("POST /v1/store/namespaces")
def _namespaces(mem: Memory, r: ListNamespaces) -> Namespaces:
    """The namespaces holding items, by prefix, suffix and depth (LangGraph's list_namespaces)."""
    from langgraph.store.base import ListNamespacesOp, MatchCondition

    conditions = []
    if r.prefix is not None:
        conditions.append(MatchCondition(match_type="prefix", path=tuple(r.prefix)))
    if r.suffix is not None:
        conditions.append(MatchCondition(match_type="suffix", path=tuple(r.suffix)))
    op = ListNamespacesOp(tuple(conditions) or None, r.max_depth, r.limit, r.offset)
    return {"namespaces": [list(ns) for ns in _listed(mem, op)]}


@ops("store.delete", "MemstackStore(mem).delete(namespace, key)")
@http("POST /v1/store/items/delete")
def _delete(mem: Memory, r: DeleteItem) -> Done:
    """Delete an item (no error when there is none, as in LangGraph)."""
    from langgraph.store.base import PutOp

    _run(mem, PutOp(tuple(r.namespace), r.key, None))
    return {"namespace": r.namespace, "key": r.key}


OPS = tuple(ops.all)
