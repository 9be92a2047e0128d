"""A LangGraph ``BaseStore`` on any memstack engine (the ``langgraph`` extra): a drop-in for
LangGraph's own stores.

Each namespace's keys share one hash tag (one Redis Cluster slot): a JSON record per item with
the engine's TTL, an ids set, the items' vectors, an expiry zset and the index kit's change log
(layout: :mod:`memstack.agent.lgstore._lg_layout`). A put is one read (the old record, for
``created_at`` and the guard) and one guarded batch (:mod:`memstack.agent.lgstore._lg_write`).
Searches run on a per-process cache of each namespace (:mod:`memstack.agent.lgstore._lg_cache`, a
mirror of the index kit kept fresh across processes): a search whose namespaces did not change
costs one read (their versions, with the registry's), on a Redis Cluster one per namespace.

LangGraph's semantics hold where LangGraph defines them: its namespace rules, its filters (part of
memstack's filter language, :mod:`memstack.search.filters`), its ``index`` configuration
(``dims``, ``embed``, ``fields``, per-put ``index=False`` or paths such as ``"notes[*]"``, each
embedded text one vector, an item scoring its best one) with ``score`` the cosine similarity, its
TTL configuration and sweeper, the attributes LangGraph code reads, and ``setup()`` /
``from_conn_string()`` as its SQL stores have them. Without an index a query is ignored, as
LangGraph's stores ignore it; memstack's own ranking (BM25, fused with the vectors) is
``ranking="fused"`` (see :mod:`memstack.agent.lgstore._lg_read`). ``list_namespaces`` lists a
namespace while it holds items, as LangGraph's Postgres store does. The async methods run the
same code in a worker thread, so engine calls and embedding never block the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
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

from ...engines import Engine, open_engine
from ...foundation.errors import InvalidConfiguration
from ...search import FUSION_PROFILES
from ...search import PROFILES as BM25_PROFILES
from ...search.embedders import Embedder
from ...services.memory import Memory
from ._lg_cache import namespace_cache
from ._lg_embed import Embedding, Matrix
from ._lg_layout import NamespaceKeys, decode_item, ns_code, ttl_ms
from ._lg_query import check_labels, check_namespace, does_match
from ._lg_read import RANKINGS, live_namespaces, search
from ._lg_ttl import Sweeper, sweep
from ._lg_write import delete_item, put_item, refresh_ttl

__all__ = ["DEFAULT_SWEEP_MINUTES", "MemstackStore"]

DEFAULT_SWEEP_MINUTES = 5.0
"""How often the sweeper runs when neither its call nor ``ttl`` says (LangGraph's default)."""


class MemstackStore(BaseStore):
    """LangGraph store on a memstack engine (or :class:`~memstack.Memory`).

    Args:
        target: the engine or memory to store items on.
        index: LangGraph's ``IndexConfig``: ``embed`` (a LangChain ``Embeddings``, a function
            ``list[str] -> list[list[float]]``, a provider string, or a memstack ``Embedder``),
            ``dims``, ``fields`` (paths embedded by default, ``["$"]``: the whole value;
            ``text_fields`` as LangGraph's SQLite store names it), ``distance_type`` (``cosine``).
        ttl: LangGraph's ``TTLConfig``: ``default_ttl`` (minutes), ``refresh_on_read`` (whether a
            get or search refreshes what it reads when its ``refresh_ttl`` does not say; False when
            the configuration does not say, as LangGraph's SQLite store reads it; reads refresh
            without a ttl configuration), ``sweep_interval_minutes``. :attr:`ttl_config` is
            the configuration with ``refresh_on_read`` filled in.
        ranking: how a query ranks: ``"cosine"`` (LangGraph's, needs ``index``), ``"fused"``
            (memstack's BM25 + vectors) or ``"none"`` (the query is ignored: filter and order
            only, as LangGraph's stores do without an index); default ``cosine`` with an index,
            else ``none``.
        profile: BM25 profile for queries (``default`` or ``rockbot``).
        fusion: how BM25 and vector scores are fused (a name of ``memstack.search.FUSION_PROFILES``).

    Raises:
        InvalidConfiguration: a bad ``index`` or ``ttl``, an unknown ranking, profile or fusion.
    """

    supports_ttl = True

    def __init__(
        self,
        target: Engine | Memory,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        ranking: str | None = None,
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
        ranking = ranking or ("none" if index is None else "cosine")
        if ranking not in RANKINGS or (ranking == "cosine" and index is None):
            raise InvalidConfiguration(
                f"ranking {ranking!r}: must be one of {', '.join(RANKINGS)} ('cosine' needs an index)"
            )
        _check_ttl_config(ttl)
        self.engine = target.engine if isinstance(target, Memory) else target
        self.index_config: IndexConfig | None = None if index is None else IndexConfig(**index)
        self._embedding = None if index is None else Embedding(index)
        # Reads refresh by their own ``refresh_ttl``, else by ``refresh_on_read``: when a ttl
        # configuration does not say, it is read as False (as LangGraph's SQLite store reads it);
        # without one, LangGraph's default (True) holds.
        self.ttl_config: TTLConfig | None = (
            None if ttl is None else TTLConfig(**{"refresh_on_read": False, **ttl})
        )
        self.ranking, self.profile, self.fusion = ranking, profile, fusion
        self._sweeper = Sweeper()

    @property
    def embeddings(self) -> Embeddings | Embedder | None:
        """What embeds texts (as given in ``index``, a function wrapped by LangChain), or None."""
        if self._embedding is None:
            return None
        return self._embedding.embedder or self._embedding.embeddings

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str, **options: Any) -> Iterator[MemstackStore]:
        """A store on the engine at URL ``conn_string`` (``sqlite:///…``, ``redis://…``…),
        closed on exit; ``options`` as the constructor's (LangGraph's stores open this way).

        Raises:
            InvalidUrl, EngineUnavailable: as :func:`memstack.engines.open_engine`.
            InvalidConfiguration: as the constructor.
        """
        engine = open_engine(conn_string)
        try:
            store = cls(engine, **options)
            try:
                yield store
            finally:
                store.stop_ttl_sweeper()
        finally:
            engine.close()

    def setup(self) -> None:
        """Nothing to set up (memstack's engines need no migrations): kept so code written for
        LangGraph's SQL stores runs unchanged."""

    # -- TTL ---------------------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Remove for good what expired (the engine already hides it) and say how many items.

        Raises:
            EngineError: the engine failed.
        """
        return sweep(self.engine)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep every ``sweep_interval_minutes`` (default: ``ttl``'s, else 5) in a daemon thread;
        without a ``ttl`` configuration nothing starts (the future is already done), as in LangGraph.
        Cancelling the future stops the thread."""
        if not self.ttl_config:
            done: concurrent.futures.Future[None] = concurrent.futures.Future()
            done.set_result(None)
            return done
        minutes = sweep_interval_minutes or self.ttl_config.get("sweep_interval_minutes")
        return self._sweeper.start(self.sweep_ttl, float(minutes or DEFAULT_SWEEP_MINUTES))

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True when it stopped (or was not running) within ``timeout`` s."""
        return self._sweeper.stop(timeout)

    # -- ops ---------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph ops in order (each op is atomic on its own). The texts of every put
        are embedded first, in one call to the embedder. A put costs one read (the old record:
        its ``created_at`` and the guard) and one guarded batch (plus, on a Redis Cluster, one
        registration batch when the namespace may be new); a get one read; a search one read
        when nothing changed (the versions of the registry and of the namespaces searched; on a
        Redis Cluster, one read per namespace more).

        Raises:
            InvalidNamespaceError: a namespace breaking LangGraph's rules (a put into an empty one).
            InvalidValue: a value that is not JSON, a bad TTL, vectors of the wrong size.
            InvalidFilter: a search filter breaking the filter language (an unknown operator).
            Conflict: a key kept changing under concurrent writers.
            ValueError: an unknown op or match type.
            EngineError: the engine failed.
            Exception: whatever the embedder raises (then no op of the batch ran).
        """
        self._sweeper.ensure()
        ops = [_checked(op) for op in ops]
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
            else:
                assert isinstance(op, ListNamespacesOp)
                results.append(self._list_namespaces(op))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread: engine calls and embedding never block the event loop."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _keys(self, namespace: tuple[str, ...]) -> NamespaceKeys:
        return NamespaceKeys.of(self.engine, ns_code(namespace))

    def _embed_puts(self, ops: Sequence[Op]) -> dict[int, Matrix]:
        """Per put op (by position), its embedded rows; one embedder call for the whole batch."""
        if self._embedding is None:
            return {}
        spans: dict[int, tuple[int, int]] = {}
        texts: list[str] = []
        for n, op in enumerate(ops):
            if isinstance(op, PutOp) and op.value is not None:
                found = self._embedding.texts(op.value, op.index)
                spans[n] = (len(texts), len(texts) + len(found))
                texts.extend(found)
        if not texts:
            return {}
        rows = self._embedding.documents(texts)
        return {n: rows[a:b] for n, (a, b) in spans.items() if b > a}

    def _get(self, op: GetOp) -> Item | None:
        keys = self._keys(op.namespace)
        raw = self.engine.get(keys.item(op.key))
        if raw is None:
            return None
        value, created_at, updated_at, ttl = decode_item(raw)
        if op.refresh_ttl and ttl is not None:
            refresh_ttl(self.engine, keys, op.key, raw)
        return Item(
            value=value, key=op.key, namespace=op.namespace, created_at=created_at, updated_at=updated_at
        )

    def _put(self, op: PutOp, vectors: Matrix | None) -> None:
        keys = self._keys(op.namespace)
        if op.value is None:
            delete_item(self.engine, keys, op.key)
        else:
            cache = namespace_cache(self.engine, keys.code, self.profile)
            put_item(self.engine, keys, op.key, op.value, op.ttl, vectors, cache)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        found = search(self.engine, op, self.profile, self._embedding, self.ranking, self.fusion)
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


def _checked(op: Op) -> Op:
    """``op`` with its namespace a checked tuple (LangGraph's label rules for every op; a put
    needs a non-empty namespace; the root label rule is ``put()``'s, as in LangGraph).

    Raises:
        InvalidNamespaceError: a label breaking LangGraph's rules, or a put into ``()``.
        ValueError: not a LangGraph op.
    """
    if isinstance(op, GetOp):
        labels = check_labels(op.namespace)
        return op if labels is op.namespace else op._replace(namespace=labels)
    if isinstance(op, PutOp):
        labels = check_labels(op.namespace)
        if not labels:
            check_namespace(labels)  # raises: a put needs a namespace
        return op if labels is op.namespace else op._replace(namespace=labels)
    if isinstance(op, SearchOp):
        labels = check_labels(op.namespace_prefix)
        return op if labels is op.namespace_prefix else op._replace(namespace_prefix=labels)
    if isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            check_labels(condition.path)
        return op
    raise ValueError(f"unknown LangGraph op {op!r}")


def _check_ttl_config(ttl: TTLConfig | None) -> None:
    """Raises: InvalidConfiguration: a ``default_ttl`` or ``sweep_interval_minutes`` that is not
    a positive number (None allowed)."""
    if ttl is None:
        return
    for name in ("default_ttl", "sweep_interval_minutes"):
        value = ttl.get(name)
        if value is None:
            continue
        try:
            ttl_ms(value)  # type: ignore[arg-type]  # checked there: anything but a positive number raises
        except ValueError:
            raise InvalidConfiguration(
                f"ttl {name}={value!r}: must be a positive number of minutes"
            ) from None
