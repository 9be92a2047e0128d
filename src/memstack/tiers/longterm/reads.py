"""The reads of a long-term scope: entries, listings, search (BM25, hybrid, cold start), vectors.

A mixin of :class:`~memstack.tiers.longterm.store.LongTermMemory`, kept apart so that each file holds one
concept: the store writes, this reads.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from ...engines import Engine
from ...foundation.errors import InvalidConfiguration, InvalidValue
from ...foundation.limits import short_repr
from ...search.retrieval import SEARCH_PROFILES
from . import cold, history, hybrid, retrieve
from .entry import MemoryEntry, SearchHit, current_at, from_json
from .history import HistoryEvent
from .index_cache import ScopeCache, scope_cache
from .layout import ScopeKeys
from .query import distinct_sorted, most_recent
from .search_request import search_request
from .validate import normalise_id
from .validity import View
from .vectors import EmbeddingWorker

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
    min_similarity: float | None
    embedder: Embedder | None
    reranker: Reranker | None
    _worker: EmbeddingWorker | None

    def get(self, id: str) -> MemoryEntry | None:  # noqa: A002 - the field is called id everywhere in the seed
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
        self,
        query: str | None = None,
        *,
        mode: str = "auto",
        category: str | None = None,
        tags: Iterable[str] | str | None = None,
        created_after: datetime | float | None = None,
        created_before: datetime | float | None = None,
        metadata: Mapping[str, object] | None = None,
        filter: Mapping[str, object] | None = None,  # noqa: A002 - the filter language's public name
        limit: int | None = None,
        offset: int = 0,
        min_score: float | None = None,
        max_results: int | None = None,
        include_history: bool = False,
        include_expired: bool = False,
        as_of: datetime | float | None = None,
    ) -> list[SearchHit]:
        """Search the scope: filters, then BM25 (hybrid with an embedder).

        The parameters are the ones every surface takes (see
        :mod:`memstack.tiers.longterm.search_request`); ``max_results`` is the seed's name for ``limit``
        (default 20). ``filter`` is the filter language (:mod:`memstack.search.filters`) on the
        built-in fields and ``metadata``, ANDed with ``category``, ``tags``, the time bounds and
        ``metadata`` (which are a part of it); ``offset`` skips that many hits first. A blank or
        None query lists the most recently changed entries. Zero BM25 scores are dropped. If
        embedding the query fails, BM25 alone answers (a warning is logged).

        Only current entries are searched: neither superseded (``valid_to`` passed) nor expired.
        ``include_history`` adds the superseded ones, ``include_expired`` the expired ones not
        swept yet; ``as_of`` (a time) searches the entries valid then instead
        (:mod:`memstack.tiers.longterm.validity`).

        Raises:
            InvalidValue: a parameter breaking its rule (names it): ``limit``/``max_results`` below 1
                or both given with different values, an ``offset`` outside 0..10,000, an unknown
                ``mode``, ``mode="hybrid"`` without an embedder, a bad time, tag or metadata value,
                a ``query`` or ``category`` that is not a string (or None) or holds a lone surrogate,
                a flag that is not a bool, a bad ``as_of``, ``as_of`` with ``include_history``.
            InvalidFilter: a ``filter`` breaking the filter language (names the field and operator).
        """
        if limit is not None and max_results is not None and limit != max_results:
            raise InvalidValue(
                f"limit {short_repr(limit)} and max_results {short_repr(max_results)}: give one of them"
            )
        wanted = limit if limit is not None else max_results
        request = search_request(
            query,
            mode=mode,
            category=category,
            tags=tags,
            created_after=created_after,
            created_before=created_before,
            metadata=metadata,
            limit=20 if wanted is None else wanted,
            min_score=min_score,
            limit_name="limit" if limit is not None else "max_results",
            filter=filter,
            offset=offset,
            include_history=include_history,
            include_expired=include_expired,
            as_of=as_of,
        )
        if request.mode == "hybrid" and self.embedder is None:
            raise InvalidValue(f"mode 'hybrid': scope {short_repr(self.scope)} has no embedder configured")
        embedder = None if request.mode == "bm25" else self.embedder
        flt, total = request.filter, request.offset + request.limit
        query_vector = hybrid.embed_query(embedder, query) if request.ranked else None  # before the lock
        cache = scope_cache(self.engine, self.scope)
        keep = max(total, 0 if self.reranker is None else self.reranker.depth)
        now = self.engine.clock.now()
        view = request.view
        cold_hits = (
            cold.search(self.engine, self.keys, cache, query, SEARCH_PROFILES[self.profile], keep)
            if request.ranked and query is not None and embedder is None and flt is None and view.default
            else None
        )
        if cold_hits is not None and all(current_at(e, now) for e, _ in cold_hits) and query is not None:
            # (a hidden entry among them: the full cache answers, its hits exclude it)
            hits = [SearchHit(e, s, bm25=s, sources=("bm25",)) for e, s in cold_hits]
            return self._finish(query, hits, total, request.min_score)[request.offset :]
        with cache.lock:
            cache.refresh(self.engine, self.keys)
            allowed, allowed_key = cache.shown(
                cache.filters.allowed(flt), view, now, None if flt is None else flt.key
            )
            if not request.ranked:
                pool = cache.entries.values() if allowed is None else (cache.entries[i] for i in allowed)
                recent = most_recent(pool, total)[request.offset :]
                return [SearchHit(e.copy(), 0.0, sources=("recent",)) for e in recent]
            assert query is not None  # request.ranked says so
            hits = retrieve.ranked(
                cache,
                query,
                SEARCH_PROFILES[self.profile],
                embedder=embedder,
                query_vector=query_vector,
                allowed=allowed,
                max_results=total,
                fusion=self.fusion,
                min_similarity=self.min_similarity,
                rerank_depth=0 if self.reranker is None else self.reranker.depth,
                allowed_key=allowed_key,
            )
        return self._finish(query, hits, total, request.min_score)[request.offset :]

    def _finish(
        self, query: str, hits: list[SearchHit], limit: int, min_score: float | None
    ) -> list[SearchHit]:
        if self.reranker is not None:
            hits = retrieve.reranked(self.reranker, query, hits, limit)
        if min_score is not None:
            hits = [h for h in hits if h.score >= min_score]
        return hits

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
