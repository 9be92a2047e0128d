"""Reads of the LangGraph store: search over the namespace caches, and the namespace listing.

A search reads the namespace registry's version and those of the namespaces under the prefix in
one call, then each namespace from its cache (kept fresh by that read: nothing more to read when
nothing changed). Filters (the filter language of
:mod:`memstack.search.filters` on the item's value, LangGraph's operators included) are evaluated
on the cached values; the keys passing a filter are kept until the namespace changes.

With a query, how items rank is the store's ``ranking``:

* ``cosine`` (the default with an ``index`` configuration): LangGraph's rule. Every embedded item
  ranks by the cosine of the query with its best vector (``SearchItem.score`` is that cosine);
  items without vectors (``index=False``) follow unscored, in insertion order.
* ``fused``: memstack's ranking (the default without an index): BM25 over the items' string
  values, fused with the cosines when the store has an index (:func:`memstack.search.fuse`;
  ``score`` is the fused score, or the BM25 score without an index); items neither retriever
  scores follow unscored when the store has an index.

If embedding the query fails, BM25 ranks instead (a warning is logged).
"""

from __future__ import annotations

import functools
import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from langgraph.store.base import SearchItem, SearchOp

from ...engines import Engine
from ...index.mirror import Seen
from ...search import fuse
from ...search.filter_eval import matches
from ...search.filters import Filter, parse_filter
from ._lg_cache import Cached, NamespaceCache, namespace_cache, namespace_list
from ._lg_embed import Embedding, Matrix
from ._lg_layout import NamespaceKeys, Record, RegistryKeys, ns_code
from ._lg_query import STORE_FIELDS, check_labels

__all__ = ["RANKINGS", "Found", "live_namespaces", "search"]

log = logging.getLogger("memstack.doors.integrations.langgraph")

RANKINGS = ("cosine", "fused")
"""How a query ranks items (see the module docstring)."""
CHECKED_AT_ONCE: Final = 64
"""Namespaces whose freshness a search reads together with the registry's (the rest, one call each)."""


@dataclass(frozen=True, slots=True)
class Found:
    """One search result before it becomes a ``SearchItem`` (``cached.raw`` guards a refresh)."""

    namespace: tuple[str, ...]
    keys: NamespaceKeys
    key: str
    cached: Cached
    score: float | None

    def item(self) -> SearchItem:
        record = self.cached.record
        return SearchItem(
            namespace=self.namespace,
            key=self.key,
            value=_copy(record.value),  # the cache's own dict must not be changed by callers
            created_at=record.created_at,
            updated_at=record.updated_at,
            score=self.score,
        )


@functools.lru_cache(maxsize=1024)
def _under(codes: frozenset[str], prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    """``(namespace, code)`` of the codes under ``prefix``, sorted by namespace (remembered: the
    registry's set changes only when a namespace is new; callers only read the list)."""
    if prefix:
        head = ns_code(prefix)[:-1]  # '["a","b"' : a code under it continues with ',' or ']'
        codes = frozenset(c for c in codes if c.startswith(head) and c[len(head)] in ",]")
    return sorted((_namespace(c), c) for c in codes)


@functools.lru_cache(maxsize=65_536)
def _namespace(code: str) -> tuple[str, ...]:
    """The namespace of a code (decoded once per process: listings decode every code)."""
    return tuple(json.loads(code))


def live_namespaces(engine: Engine) -> list[tuple[str, ...]]:
    """Every namespace holding a live item, sorted: one call when no namespace is new to this
    process (the registry's version read with the counts), else two; on a cluster, one per
    namespace more.

    Raises:
        EngineError: the engine failed.
    """
    listing = namespace_list(engine)
    if engine.clustered or not listing.fresh:
        codes, expiring = listing.update(engine)
        return _live_in(engine, _under(codes, ()), expiring, None)[1]
    with listing.lock:
        codes, expiring = listing.names, listing.ttls
    registry = RegistryKeys.of(engine)
    seen, live = _live_in(engine, _under(codes, ()), expiring, [registry.version, registry.epoch])
    assert seen is not None
    now_codes, now_expiring = listing.update(engine, (seen[0], seen[1]))
    if now_codes == codes and now_expiring == expiring:
        return live
    return _live_in(engine, _under(now_codes, ()), now_expiring, None)[1]


def _live_in(
    engine: Engine, pairs: list[tuple[tuple[str, ...], str]], expiring: frozenset[str], also: list[str] | None
) -> tuple[list[str | None] | None, list[tuple[str, ...]]]:
    """``(the values of keys also, the namespaces of pairs holding a live item)``: one call
    (``also`` read in it), one per namespace on a cluster (then ``also`` must be None)."""
    now = engine.now_ms()
    groups = [[p] for p in pairs] if engine.clustered else [pairs]
    live: list[tuple[str, ...]] = []
    read: list[str | None] | None = None
    for group in groups:
        batch = engine.batch()
        if also is not None:
            batch.mget(also)
        base = 0 if also is None else 1
        for _, code in group:
            batch.scard(NamespaceKeys.of(engine, code).scope.ids)
        timed = [code for _, code in group if code in expiring]
        for code in timed:
            keys = NamespaceKeys.of(engine, code)
            batch.zcard(keys.expiry)
            batch.zrangebyscore(keys.expiry, now + 1, math.inf, count=1)
        result = batch.execute()
        if also is not None:
            read = result[0]
        counts = {code: int(result[base + n]) for n, (_, code) in enumerate(group)}
        for i, code in enumerate(timed):
            at = base + len(group) + 2 * i
            with_ttl, unexpired = int(result[at]), result[at + 1]
            # Counted items without a TTL, or a TTL item not yet expired.
            counts[code] = 1 if counts[code] - with_ttl > 0 or unexpired else 0
        live.extend(ns for ns, code in group if counts[code] > 0)
    return read, live


def _fresh_under(
    engine: Engine, prefix: tuple[str, ...]
) -> tuple[list[tuple[tuple[str, ...], str]], dict[str, Seen]]:
    """``(namespace, code)`` of the namespaces under ``prefix`` as of now, and the ``(version,
    epoch)`` of those whose caches' freshness was read with the registry's.

    One read when the registry is known: its version and epoch, and those of the first
    :data:`CHECKED_AT_ONCE` namespaces it lists under ``prefix`` (a search reads what its caches
    hold from there); a namespace the registry gained since is checked by its own refresh. On a
    cluster every namespace lives in a slot of its own: the registry is read alone.
    """
    listing = namespace_list(engine)
    if engine.clustered or not listing.fresh:
        codes, _ = listing.update(engine)
        return _under(codes, prefix), {}
    guess = _under(listing.names, prefix)[:CHECKED_AT_ONCE]
    registry = RegistryKeys.of(engine)
    read = [registry.version, registry.epoch]
    for _, code in guess:
        scope = NamespaceKeys.of(engine, code).scope
        read += [scope.version, scope.epoch]
    values = engine.mget(read)
    codes, _ = listing.update(engine, (values[0], values[1]))
    seen = {code: (values[2 + 2 * n], values[3 + 2 * n]) for n, (_, code) in enumerate(guess)}
    return _under(codes, prefix), seen


def _live(cache: NamespaceCache, flt: Filter | None, now: int) -> list[str]:
    """The live keys passing ``flt``, in insertion order (the passing ones kept until a change)."""
    if flt is None:
        return cache.live(now)
    passing = cache.passing(
        ("filter", flt.key), lambda k, c: matches(flt, c.record.value, _builtins(k, c.record))
    )
    return cache.live(now, passing)


def _builtins(key: str, record: Record) -> Callable[[str], Any]:
    def field(name: str) -> Any:
        if name == "key":
            return key
        return (record.created_at if name == "created_at" else record.updated_at).timestamp()

    return field


def search(
    engine: Engine, op: SearchOp, profile: str, embedding: Embedding | None, ranking: str, fusion: str
) -> list[Found]:
    """The page of results of ``op``.

    Raises:
        InvalidNamespaceError: a bad label in the prefix.
        InvalidFilter: a filter breaking the filter language (an unknown operator included).
        EngineError: the engine failed.
    """
    prefix = check_labels(op.namespace_prefix)
    flt = parse_filter(op.filter, STORE_FIELDS)
    pairs, seen = _fresh_under(engine, prefix)
    query = op.query if op.query and op.query.strip() else None
    query_vector = _query_vector(embedding, query)
    cosine_only = ranking == "cosine" and query_vector is not None
    end = op.offset + op.limit
    now = engine.now_ms()
    pool: list[Found] = []  # every candidate a page may need, in namespace then insertion order
    bm25: list[tuple[str, float]] = []  # (position in pool, score)
    cosine: list[tuple[str, float]] = []
    for namespace, code in pairs:
        keys = NamespaceKeys.of(engine, code)
        cache = namespace_cache(engine, code, profile)
        with cache.lock:
            cache.refresh(engine, keys.scope, seen.get(code))
            live = _live(cache, flt, now)
            candidates = None if len(live) == len(cache.items) else set(live)
            if query is None:
                picked = live[: max(0, end - len(pool))]
            elif embedding is None:  # BM25 alone: a namespace's best `end` hits are all a page can use
                hits = cache.index.search(query, max(0, end), candidates)
                picked = [k for k, _ in hits]
                bm25.extend((str(len(pool) + n), score) for n, (_, score) in enumerate(hits))
            else:  # every live item is a candidate (unscored ones fill the page)
                picked = live
                slot = {key: str(len(pool) + n) for n, key in enumerate(live)}
                if not cosine_only:
                    bm25.extend((slot[k], s) for k, s in cache.index.search(query, None, candidates))
                if query_vector is not None:
                    cosine.extend((slot[k], s) for k, s in _cosines(cache, query_vector) if k in slot)
            pool.extend(Found(namespace, keys, key, cache.items[key], None) for key in picked)
        if query is None and len(pool) >= end:
            break
    if query is None:
        return pool[op.offset : end]
    if cosine_only:
        return _by_cosine(pool, cosine)[op.offset : end]
    return _ranked(pool, bm25, cosine, embedding is not None, fusion)[op.offset : end]


def _cosines(cache: NamespaceCache, query_vector: Matrix) -> list[tuple[str, float]]:
    index = cache.vectors.get(int(query_vector.shape[0]))
    if index is None:
        return []
    ids, sims = index.similarities(query_vector)
    return list(zip(ids, sims.tolist(), strict=True))


def _by_cosine(pool: list[Found], cosine: list[tuple[str, float]]) -> list[Found]:
    """Embedded items by cosine (ties in pool order, as LangGraph's stable sort), then the rest."""
    scored = sorted(((int(slot), s) for slot, s in cosine), key=lambda hit: (-hit[1], hit[0]))
    seen = {slot for slot, _ in scored}
    return [_scored(pool[slot], score) for slot, score in scored] + [
        f for n, f in enumerate(pool) if n not in seen
    ]


def _query_vector(embedding: Embedding | None, query: str | None) -> Matrix | None:
    if embedding is None or query is None:
        return None
    try:
        return embedding.query(query)
    except Exception:  # any embedder failure degrades to BM25, as long-term memory does
        log.warning("embedding the query failed; searching with BM25 only", exc_info=True)
        return None


def _ranked(
    pool: list[Found],
    bm25: list[tuple[str, float]],
    cosine: list[tuple[str, float]],
    hybrid: bool,
    fusion: str,
) -> list[Found]:
    bm25.sort(key=lambda hit: -hit[1])  # stable: ties keep namespace, then insertion order
    if not hybrid:
        return [_scored(pool[int(slot)], score) for slot, score in bm25]
    cosine.sort(key=lambda hit: -hit[1])
    # Every embedded item ranks by its cosine (LangGraph's rule), so no similarity threshold.
    fused = fuse(bm25, cosine, fusion, min_similarity=-1.0)
    seen = {int(h.id) for h in fused}
    ranked = [_scored(pool[int(h.id)], h.score) for h in fused]
    return ranked + [f for n, f in enumerate(pool) if n not in seen]


def _copy(value: Any) -> Any:
    """A copy of a JSON value (several times faster than ``copy.deepcopy`` on one)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _scored(found: Found, score: float) -> Found:
    return Found(found.namespace, found.keys, found.key, found.cached, score)
