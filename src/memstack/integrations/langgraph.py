"""A LangGraph ``BaseStore`` on any memstack engine (the ``langgraph`` extra).

Each namespace's keys share one hash tag (one Redis Cluster slot): a JSON record per item with
the engine's TTL, an ids set, the items' vectors, an expiry zset, a live count and a change log
(layout: :mod:`memstack.integrations._lg_layout`). A put is one read (the old record, for
``created_at`` and the guard) and one guarded batch (:mod:`memstack.integrations._lg_write`).
Searches run on a per-process cache of each namespace (decoded records, a BM25 index, vectors)
kept fresh across processes from the namespace's change log, as long-term memory's caches are
(:mod:`memstack.integrations._lg_cache`): an unchanged namespace costs one read per search.

``search`` applies LangGraph's filter operators (``$eq $ne $gt $gte $lt $lte``, nested dicts,
lists) and, with a query, ranks by BM25 over the item's string values; with LangGraph's
``index`` configuration (``dims``, ``embed``, ``fields``) the items' vectors are stored at put
time and fused with BM25 (``SearchItem.score`` is the fused score). ``list_namespaces`` reads a
registry and each namespace's live count: as with LangGraph's Postgres store, a namespace is
listed only while it holds items.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from .._memory import Memory
from ..engines import Engine
from ..errors import InvalidConfiguration
from ..search import FUSION_PROFILES
from ..search import PROFILES as BM25_PROFILES
from ._lg_cache import namespace_cache
from ._lg_embed import Matrix, VectorIndex
from ._lg_layout import NamespaceKeys, decode_record, ns_code
from ._lg_query import does_match, validate_namespace
from ._lg_read import live_namespaces, search
from ._lg_write import delete_item, put_item, refresh_ttl

__all__ = ["MemstackStore"]


class MemstackStore(BaseStore):
    """LangGraph store on a memstack engine (or :class:`~memstack.Memory`).

    Args:
        target: the engine or memory to store items on.
        index: LangGraph's ``IndexConfig``: ``embed`` (a LangChain ``Embeddings``, a function
            ``list[str] -> list[list[float]]``, a provider string, or a memstack ``Embedder``),
            ``dims``, ``fields`` (paths embedded by default, ``["$"]``: the whole value).
        ttl: LangGraph's ``TTLConfig`` (``default_ttl`` in minutes, ``refresh_on_read``).
        profile: BM25 profile for queries (``default`` or ``rockbot``).
        fusion: how BM25 and vector scores are fused (a name of ``memstack.search.FUSION_PROFILES``).

    Raises:
        InvalidConfiguration: a bad ``index``, an unknown profile or fusion.
    """

    supports_ttl = True

    def __init__(
        self,
        target: Engine | Memory,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        profile: str = "default",
        fusion: str = "default",
    ) -> None:
        if profile not in BM25_PROFILES:
            raise InvalidConfiguration(
                f"profile {profile!r}: must be one of {', '.join(sorted(BM25_PROFILES))}"
            )
        if fusion not in FUSION_PROFILES:
            raise InvalidConfiguration(
                f"fusion {fusion!r}: must be one of {', '.join(sorted(FUSION_PROFILES))}"
            )
        self.engine = target.engine if isinstance(target, Memory) else target
        self.index_config = index
        self.vectors = None if index is None else VectorIndex(index)
        self.ttl_config = ttl
        self.profile, self.fusion = profile, fusion

    def _keys(self, namespace: tuple[str, ...]) -> NamespaceKeys:
        return NamespaceKeys.of(self.engine, ns_code(namespace))

    # -- ops ---------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph ops in order (each op is atomic on its own). The texts of every put
        are embedded first, in one call to the embedder. A put costs one read (the old record:
        its ``created_at`` and the guard) and one guarded batch (plus, on a Redis Cluster, one
        registration batch when the namespace may be new); a get one read; a search one read
        of the registry's version and one per namespace searched when nothing changed.

        Raises:
            InvalidNamespaceError: a put into a namespace LangGraph refuses.
            InvalidValue: a value that is not JSON, a bad TTL, vectors of the wrong size.
            Conflict: a key kept changing under concurrent writers.
            ValueError: an unknown op, filter operator or match type.
            EngineError: the engine failed.
            Exception: whatever the embedder raises (then no op of the batch ran).
        """
        ops = list(ops)
        vectors = self._embed_puts(ops)
        results: list[Result] = []
        for n, op in enumerate(ops):
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                self._put(op, vectors.get(n))
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValueError(f"unknown LangGraph op {op!r}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The async twin of :meth:`batch`: the same core in a worker thread, so engine calls
        and embedding never block the event loop."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _embed_puts(self, ops: Sequence[Op]) -> dict[int, Matrix]:
        """Per put op (by position), its embedded rows; one embedder call for the whole batch."""
        if self.vectors is None:
            return {}
        spans: dict[int, tuple[int, int]] = {}
        texts: list[str] = []
        for n, op in enumerate(ops):
            if isinstance(op, PutOp) and op.value is not None:
                validate_namespace(op.namespace)
                found = self.vectors.texts(op.value, op.index)
                spans[n] = (len(texts), len(texts) + len(found))
                texts.extend(found)
        if not texts:
            return {}
        rows = self.vectors.documents(texts)
        return {n: rows[a:b] for n, (a, b) in spans.items() if b > a}

    def _get(self, op: GetOp) -> Item | None:
        keys = self._keys(op.namespace)
        raw = self.engine.get(keys.item(op.key))
        if raw is None:
            return None
        record = decode_record(raw)
        if op.refresh_ttl and record.ttl is not None:
            refresh_ttl(self.engine, keys, op.key, raw)
        return Item(
            value=record.value,
            key=op.key,
            namespace=op.namespace,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )

    def _put(self, op: PutOp, vectors: Matrix | None) -> None:
        validate_namespace(op.namespace)
        keys = self._keys(op.namespace)
        if op.value is None:
            delete_item(self.engine, keys, op.key)
        else:
            cache = namespace_cache(self.engine, keys.code, self.profile)
            put_item(self.engine, keys, op.key, op.value, op.ttl, vectors, cache)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        found = search(self.engine, op, self.profile, self.vectors, self.fusion)
        if op.refresh_ttl:
            for hit in found:
                if hit.cached.record.ttl is not None:
                    refresh_ttl(self.engine, hit.keys, hit.key, hit.cached.raw)
        return [hit.item() for hit in found]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        live = live_namespaces(self.engine)
        if op.match_conditions:
            live = [ns for ns in live if all(does_match(c, ns) for c in op.match_conditions)]
        if op.max_depth is not None:
            live = sorted({ns[: op.max_depth] for ns in live})
        return live[op.offset : op.offset + op.limit]
