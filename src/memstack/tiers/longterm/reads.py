"""The reads of a long-term scope: entries, listings, search (BM25, hybrid, cold start), vectors.

A mixin of :class:`~memstack.tiers.longterm.store.LongTermMemory`, kept apart so that each file holds one
concept: the store writes, this reads.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

from ...engines import Engine
from ...foundation.errors import InvalidConfiguration, InvalidValue
from ...foundation.limits import short_repr
from ...search.retrieval import SEARCH_PROFILES
from . import ann, ann_exact, cold, history, hybrid, retrieve, turn_bits
from .entry import MemoryEntry, SearchHit, current_at, from_json
from .history import HistoryEvent
from .index_cache import ScopeCache, scope_cache
from .layout import ScopeKeys
from .query import distinct_sorted, most_recent
from .search_request import SearchRequest, search_request
from .validate import normalise_id
from .validity import View
from .vectors import EmbeddingWorker, Matrix, wait_pending

if TYPE_CHECKING:
    from ...search.embedders import Embedder
    from ...search.rerank import Reranker

__all__ = ["LongTermReads"]

log = logging.getLogger("memstack.tiers.longterm")


class LongTermReads:
    """``get``, ``entries``, listings, ``search`` and the vector upkeep of one scope."""

    engine: Engine
    scope: str
    keys: ScopeKeys
    profile: str
    fusion: str
    fusion_asked: bool
    min_similarity: float | None
    embedder: Embedder | None
    reranker: Reranker | None
    _worker: EmbeddingWorker | None

    def get(self, id: str) -> MemoryEntry | None:  # noqa: A002 - the field is called id in RockBot's API
        """The memory with this id (case-insensitive), or None.

        Raises:
            InvalidKey: a malformed id.
        """
        raw = self.engine.get(self.keys.entry(normalise_id(id)))
        return None if raw is None else from_json(raw)

    def __len__(self) -> int:
        """How many entries the scope stores (superseded and expired ones included)."""
        return self.engine.scard(self.keys.ids)

    def current_count(self) -> int:
        """How many entries are current now (neither superseded nor expired: what searches show)."""
        cache = self._fresh_cache()
        with cache.lock:
            shown, _ = cache.shown(None, View(), self.engine.clock.now(), None)
            return len(cache.entries) if shown is None else len(shown)

    def history(self, id: str) -> list[HistoryEvent]:  # noqa: A002 - the field is called id everywhere
        """Every recorded change of the memory ``id``, oldest first (see
        :mod:`memstack.tiers.longterm.history`): ``[]`` for an id never saved, deleted, or saved before
        histories were kept. A retired entry keeps its history as long as the pass's archive.

        Raises:
            InvalidKey: a malformed id.
        """
        raws = self.engine.lrange(self.keys.history(normalise_id(id)), 0, -1)
        return [history.decode(raw) for raw in raws]

    def entries(self) -> list[MemoryEntry]:
        """Every memory of the scope, oldest first (ties by id)."""
        cache = self._fresh_cache()
        with cache.lock:
            items = [e.copy() for e in cache.entries.values()]
        return sorted(items, key=lambda e: (e.created_at, e.id))

    def list_categories(self) -> list[str]:
        """Distinct non-null categories (case-insensitively; the oldest entry's spelling wins),
        sorted case-insensitively."""
        return distinct_sorted([e.category for e in self.entries() if e.category is not None])

    def list_tags(self) -> list[str]:
        """Distinct tags (case-insensitively; the oldest entry's spelling wins), sorted
        case-insensitively."""
        return distinct_sorted([t for e in self.entries() for t in e.tags])

    def _fresh_cache(self) -> ScopeCache:
        cache = scope_cache(self.engine, self.scope)
        with cache.lock:
            cache.refresh(self.engine, self.keys)
        return cache

    # -- search ------------------------------------------------------------------------------
    def search(
        self, query: str | None = None, *, max_results: int | None = None, **options: Any
    ) -> list[SearchHit]:
        """Search the scope: filters, then BM25 (hybrid with an embedder).

        The keywords are the fields of :class:`~memstack.tiers.longterm.search_request.SearchRequest`
        (the parameters every door takes, declared there once); ``max_results`` is RockBot's name
        for ``limit`` (default 20). ``filter`` is the filter language (:mod:`memstack.search.filters`)
        on the built-in fields and ``metadata``, ANDed with ``category``, ``tags``, the time bounds
        and ``metadata``; ``offset`` skips that many hits first. A blank or None query lists the most
        recently changed entries. Without an embedder zero BM25 scores are dropped; with one, every
        entry with a vector is a candidate, so the search answers ``min(limit, entries)`` hits unless
        ``min_score`` is set (the fused score: :mod:`memstack.search.evidence`). If embedding the query
        fails, BM25 alone answers (a warning is logged). Vectors this process is still computing for
        the scope are waited for, up to :data:`~memstack.tiers.longterm.vectors.READ_YOUR_WRITES_WAIT`
        seconds, so a save followed by a search ranks the new entry with its vector.

        Only current entries are searched: neither superseded (``valid_to`` passed) nor expired.
        ``include_history`` adds the superseded ones, ``include_expired`` the expired ones not
        swept yet; ``as_of`` (a time) searches the entries valid then instead
        (:mod:`memstack.tiers.longterm.validity`).

        Raises:
            InvalidValue: a parameter breaking its rule (names it), or an unknown one:
                ``limit``/``max_results`` below 1 or both given with different values, an ``offset``
                outside 0..10,000, an unknown ``mode``, ``mode="hybrid"`` without an embedder, a bad
                time, tag or metadata value, a ``query`` or ``category`` that is not a string (or
                None) or holds a lone surrogate, a flag that is not a bool, a bad ``as_of``, ``as_of``
                with ``include_history``.
            InvalidFilter: a ``filter`` breaking the filter language (names the field and operator).
        """
        if options.get("limit", 0) is None:  # None: the default, as for max_results
            options = {k: v for k, v in options.items() if k != "limit"}
        if max_results is not None:
            limit = options.get("limit")
            if limit is not None and limit != max_results:
                raise InvalidValue(
                    f"limit {short_repr(limit)} and max_results {short_repr(max_results)}: give one of them"
                )
            options = {**options, "limit": max_results, "limit_name": "max_results"}
        return self.search_with(search_request(query, **options))

    def search_with(self, request: SearchRequest) -> list[SearchHit]:
        """:meth:`search` for a request already built (and so already checked).

        Raises:
            InvalidValue: ``mode="hybrid"`` without an embedder.
        """
        if request.mode == "hybrid" and self.embedder is None:
            raise InvalidValue(f"mode 'hybrid': scope {short_repr(self.scope)} has no embedder configured")
        embedder = None if request.mode == "bm25" else self.embedder
        query_vector = None
        if request.ranked and embedder is not None:
            query_vector = hybrid.embed_query(embedder, request.query)  # before the lock
            wait_pending(self.keys)  # this process's own writes, ranked with their vectors
        cache = scope_cache(self.engine, self.scope)  # once: the registry's lookup measures caches
        if request.ranked and embedder is None and request.where is None and request.view.default:
            hits = self._cold(request, cache)
            if hits is not None:
                return self._finish(request, hits)
        return self._finish(request, self._cached(request, embedder, query_vector, cache))

    def _cold(self, request: SearchRequest, cache: ScopeCache) -> list[SearchHit] | None:
        """BM25 hits from the scope's snapshot before the full cache is built, or None (no snapshot,
        or a hidden entry among the hits: then the full cache answers, its hits excluding it)."""
        assert request.query is not None  # request.ranked says so
        keep = max(request.offset + request.limit, 0 if self.reranker is None else self.reranker.depth)
        found = cold.search(self.engine, self.keys, cache, request.query, SEARCH_PROFILES[self.profile], keep)
        now = self.engine.clock.now()
        if found is None or not all(current_at(e, now) for e, _ in found):
            return None
        return [SearchHit(e, s, bm25=s, sources=("bm25",)) for e, s in found]

    def _cached(
        self,
        request: SearchRequest,
        embedder: Embedder | None,
        query_vector: Matrix | None,
        cache: ScopeCache,
        defer: bool = True,
    ) -> list[SearchHit]:
        """The hits from the scope's full cache: ranked for a query, the most recent without one.

        A graph-backed search's exact pass (:mod:`.ann_exact`, a network round trip on Redis and
        PostgreSQL) reads the engine without ``cache.lock``, so that the searches of one scope do
        not wait for each other's reads: the vector hits are drafted under the lock (with the
        digests their stored vectors must match), read and re-scored without it, then fused under
        it again if the cache has not changed meanwhile; if it has, the search starts again with
        the read under the lock (``defer`` False), so that every part of it sees one version."""
        total, flt = request.offset + request.limit, request.where
        cache.settle()  # a snapshot serialising the index: wait for it here, not under the lock
        with cache.lock:
            cache.refresh(self.engine, self.keys)
            cache.thawed()
            turn_bits.widen(self.engine, self.keys, cache)  # a scope that now holds turns: 8 bits
            allowed, allowed_key = cache.shown(
                cache.filters.allowed(flt),
                request.view,
                self.engine.clock.now(),
                None if flt is None else flt.key,
            )
            if request.query is None or not request.ranked:
                pool = cache.entries.values() if allowed is None else (cache.entries[i] for i in allowed)
                return [SearchHit(e.copy(), 0.0, sources=("recent",)) for e in most_recent(pool, total)]
            profile = SEARCH_PROFILES[self.profile]
            rerank_depth = 0 if self.reranker is None else self.reranker.depth
            search = functools.partial(
                retrieve.ranked,
                cache,
                request.query,
                profile,
                embedder=embedder,
                query_vector=query_vector,
                allowed=allowed,
                max_results=total,
                fusion=self.fusion if self.fusion_asked else None,
                min_similarity=self.min_similarity,
                rerank_depth=rerank_depth,
                allowed_key=allowed_key,
            )
            if embedder is None or query_vector is None or not ann.uses_graph(cache, profile):
                return search()
            model, dim = embedder.model_id, embedder.dim
            found = ann.prepare(self.engine, self.keys, cache, model, dim)
            exact = ann_exact.reader(self.engine, self.keys, cache, model, dim)
            vectors = cache.vector_index(model, dim)
            if found is None or not vectors.quantised or not defer:
                return search(exact=exact)
            depth = retrieve.depth_of(profile, total, rerank_depth)
            drafted = ann.draft(found, vectors, query_vector, profile, allowed, depth, exact)
            head = [] if drafted is None else drafted.head
            wanted, as_of = ann_exact.digests(cache, head, model), (cache.epoch, cache.version)
        vector: retrieve.VectorHits = ([], None)
        if drafted is not None:
            rows, ok = ann_exact.read(self.engine, self.keys, model, dim, head, wanted)  # no lock held
            vector = drafted.rescored(rows, ok), drafted.background
        cache.settle()
        with cache.lock:
            if (cache.epoch, cache.version) == as_of:
                return search(vector=vector)
        return self._cached(request, embedder, query_vector, cache, defer=False)

    def _finish(self, request: SearchRequest, hits: list[SearchHit]) -> list[SearchHit]:
        """Rerank (ranked hits only), drop those under ``min_score``, skip ``offset``."""
        total = request.offset + request.limit
        if request.ranked and request.query is not None:
            if self.reranker is not None:
                hits = retrieve.reranked(self.reranker, request.query, hits, total)
            if request.min_score is not None:
                hits = [h for h in hits if h.score >= request.min_score]
        return hits[request.offset : total]

    # -- vectors -----------------------------------------------------------------------------
    def stale_vectors(self) -> int:
        """How many stored vectors were computed by another model (id or dimension) than the
        current embedder's; they are not used until :meth:`reembed`. 0 without an embedder."""
        if self.embedder is None:
            return 0
        cache = self._fresh_cache()
        with cache.lock:
            return hybrid.count_stale(cache, self.embedder)

    def flush_embeddings(self, timeout: float | None = None) -> bool:
        """Wait for the background vector computations of this instance; False on timeout."""
        return True if self._worker is None else self._worker.flush(timeout)

    def close(self, timeout: float | None = None) -> int:
        """Finish the background vector computations of this instance within ``timeout`` seconds
        (None: all of them) and stop its worker; returns how many were left without a vector
        (any process with an embedder fills them in: :mod:`memstack.tiers.longterm.backfill`). The
        scope stays usable; later saves are no longer embedded by this instance."""
        return 0 if self._worker is None else self._worker.close(timeout)

    def reembed(self) -> int:
        """Compute now every missing, stale or outdated vector; returns how many were written.

        Raises:
            InvalidConfiguration: no embedder is configured.
            Exception: whatever the embedder raises.
        """
        if self._worker is None or self.embedder is None:
            raise InvalidConfiguration(f"scope {short_repr(self.scope)}: reembed() needs an embedder")
        self.flush_embeddings()
        cache = self._fresh_cache()
        with cache.lock:
            valid = set(hybrid.valid_vector_ids(cache, self.embedder))
            jobs = sorted((i, t) for i, t in cache.texts.items() if i not in valid)
        written = 0
        for start in range(0, len(jobs), 64):
            written += self._worker.write(jobs[start : start + 64])
        return written
