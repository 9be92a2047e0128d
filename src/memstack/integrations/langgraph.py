"""A LangGraph ``BaseStore`` on any memstack engine (the ``langgraph`` extra).

Items live per namespace under one hash tag (one Redis Cluster slot per namespace): a JSON record
per item (value, created/updated time, TTL in minutes) with the engine's TTL, and a sorted set that
keeps first-insertion order. A registry set lists namespaces; as with LangGraph's Postgres store,
a namespace is listed only while it holds items. ``search`` applies LangGraph's filter
operators (``$eq $ne $gt $gte $lt $lte``, nested dicts, lists) and, with a query, ranks by BM25
(memstack's offline index) over the item's string values; no embeddings are required.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from .._memory import Memory
from ..engines import Engine
from ..search import Bm25Index

__all__ = ["MemstackStore"]

_REGISTRY = "lg:namespaces"


def _ns_code(namespace: tuple[str, ...]) -> str:
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


class MemstackStore(BaseStore):
    """LangGraph store on a memstack engine (or :class:`~memstack.Memory`).

    Args:
        target: the engine or memory to store items on.
        ttl: LangGraph's ``TTLConfig`` (``default_ttl`` in minutes, ``refresh_on_read``).
        profile: BM25 profile for queries (``default`` or ``rockbot``).
    """

    supports_ttl = True

    def __init__(
        self, target: Engine | Memory, *, ttl: TTLConfig | None = None, profile: str = "default"
    ) -> None:
        self.engine = target.engine if isinstance(target, Memory) else target
        self.ttl_config = ttl
        self.profile = profile

    # -- keys --------------------------------------------------------------------------------
    def _item_key(self, code: str, key: str) -> str:
        return f"lg:{self.engine.tag(code)}:i:{key}"

    def _order_key(self, code: str) -> str:
        return f"lg:{self.engine.tag(code)}:order"

    def _seq_key(self, code: str) -> str:
        return f"lg:{self.engine.tag(code)}:seq"

    # -- ops ---------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph ops in order (each op is atomic on its own)."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValueError(f"unknown LangGraph op {op!r}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The async twin of :meth:`batch` (same core, run in a worker thread)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.engine.clock.now(), UTC)

    def _to_item(self, namespace: tuple[str, ...], key: str, raw: str) -> tuple[Item, dict[str, Any]]:
        record = json.loads(raw)
        item = Item(
            value=record["value"],
            key=key,
            namespace=namespace,
            created_at=datetime.fromisoformat(record["created_at"]),
            updated_at=datetime.fromisoformat(record["updated_at"]),
        )
        return item, record

    def _refresh(self, code: str, key: str, record: dict[str, Any], refresh: bool | None) -> None:
        if refresh and record.get("ttl"):
            self.engine.pexpire(self._item_key(code, key), math.ceil(float(record["ttl"]) * 60_000))

    def _get(self, op: GetOp) -> Item | None:
        code = _ns_code(op.namespace)
        raw = self.engine.get(self._item_key(code, op.key))
        if raw is None:
            return None
        item, record = self._to_item(op.namespace, op.key, raw)
        self._refresh(code, op.key, record, op.refresh_ttl)
        return item

    def _put(self, op: PutOp) -> None:
        _validate_namespace(op.namespace)
        code = _ns_code(op.namespace)
        item_key = self._item_key(code, op.key)
        if op.value is None:
            with self.engine.batch() as batch:
                batch.delete(item_key)
                batch.zrem(self._order_key(code), op.key)
            return
        now = self._now().isoformat()
        old = self.engine.get(item_key)
        created = json.loads(old)["created_at"] if old is not None else now
        ttl = op.ttl if op.ttl is not None else None
        record = {"value": op.value, "created_at": created, "updated_at": now, "ttl": ttl}
        px = math.ceil(float(ttl) * 60_000) if ttl else None
        seq = self.engine.incr(self._seq_key(code)) if old is None else None
        self.engine.sadd(_REGISTRY, code)  # another slot: registered first, pruned lazily when empty
        with self.engine.batch() as batch:
            batch.set(item_key, json.dumps(record, ensure_ascii=False), px=px)
            if seq is not None:
                batch.zadd(self._order_key(code), {op.key: float(seq)})

    def _items(self, code: str) -> list[tuple[str, str]]:
        """Live ``(key, raw record)`` of one namespace in first-insertion order; prunes expired keys."""
        keys = [member for member, _ in self.engine.zrange(self._order_key(code), 0, -1)]
        if not keys:
            return []
        raws = self.engine.mget([self._item_key(code, k) for k in keys])
        gone = [k for k, raw in zip(keys, raws, strict=True) if raw is None]
        if gone:
            self.engine.zrem(self._order_key(code), *gone)
        return [(k, raw) for k, raw in zip(keys, raws, strict=True) if raw is not None]

    def _namespaces(self) -> list[tuple[str, tuple[str, ...]]]:
        return sorted((code, tuple(json.loads(code))) for code in self.engine.smembers(_REGISTRY))

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = op.namespace_prefix
        found: list[tuple[Item, dict[str, Any], str]] = []
        for code, namespace in self._namespaces():
            if namespace[: len(prefix)] != prefix:
                continue
            for key, raw in self._items(code):
                item, record = self._to_item(namespace, key, raw)
                if not op.filter or all(_matches(item.value.get(k), v) for k, v in op.filter.items()):
                    found.append((item, record, code))
        scores: dict[int, float] = {}
        if op.query and op.query.strip():
            index = Bm25Index(self.profile)
            for i, (item, _, _) in enumerate(found):
                index.add(str(i), _text(item.value))
            ranked = index.search(op.query)
            scores = {int(doc): score for doc, score in ranked}
            order = [int(doc) for doc, _ in ranked]
        else:
            order = list(range(len(found)))
        page = order[op.offset : op.offset + op.limit] if op.limit >= 0 else order[op.offset :]
        out = []
        for i in page:
            item, record, code = found[i]
            self._refresh(code, item.key, record, op.refresh_ttl)
            out.append(
                SearchItem(
                    namespace=item.namespace,
                    key=item.key,
                    value=item.value,
                    created_at=item.created_at,
                    updated_at=item.updated_at,
                    score=scores.get(i),
                )
            )
        return out

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        live = [
            ns
            for code, ns in self._namespaces()
            if self.engine.zcard(self._order_key(code)) and self._items(code)
        ]
        if op.match_conditions:
            live = [ns for ns in live if all(_does_match(c, ns) for c in op.match_conditions)]
        if op.max_depth is not None:
            live = sorted({ns[: op.max_depth] for ns in live})
        return live[op.offset : op.offset + op.limit]


def _validate_namespace(namespace: tuple[str, ...]) -> None:
    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(f"Namespace labels must be strings, got {label!r} in {namespace!r}")
        if not label:
            raise InvalidNamespaceError(f"Namespace labels cannot be empty strings: {namespace!r}")
        if "." in label:
            raise InvalidNamespaceError(f"Namespace labels cannot contain periods ('.'): {namespace!r}")
    if namespace[0] == "langgraph":
        raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph": {namespace!r}')


def _text(value: Any) -> str:
    """The string leaves of a JSON value, joined: what BM25 indexes."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(_text(v) for v in value.values())
    if isinstance(value, list | tuple):
        return " ".join(_text(v) for v in value)
    return "" if value is None else str(value)


def _matches(value: Any, wanted: Any) -> bool:
    """LangGraph's JSONB-like filter semantics (the same operators as its in-memory store)."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, k, v) for k, v in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


_OPERATORS: dict[str, Any] = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: float(a) > float(b),
    "$gte": lambda a, b: float(a) >= float(b),
    "$lt": lambda a, b: float(a) < float(b),
    "$lte": lambda a, b: float(a) <= float(b),
}


def _operator(value: Any, name: str, operand: Any) -> bool:
    if name not in _OPERATORS:
        raise ValueError(f"Unsupported operator: {name}")
    try:
        return bool(_OPERATORS[name](value, operand))
    except (TypeError, ValueError):  # a missing or non-numeric field never matches an ordering
        return False


def _does_match(condition: MatchCondition, namespace: Sequence[str]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    if condition.match_type not in ("prefix", "suffix"):
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or n == p for n, p in pairs)
