"""One search of one scope's cache under a :class:`~memstack.search.SearchProfile`.

BM25 (optionally with RM3 expansion and the conversation-context field), vectors (optionally with
Rocchio feedback), fusion, then an optional rerank stage. The caller holds the cache's lock.
"""

from __future__ import annotations

import logging
from typing import Final, cast

import numpy as np
import numpy.typing as npt

from ...search import Bm25Index, thread_table
from ...search.embedders import Embedder
from ...search.evidence import Background, Terms
from ...search.feedback import rm3_weights, rocchio
from ...search.fusion import Row, fuse_rows, fused_terms
from ...search.rerank import Reranker
from ...search.retrieval import SearchProfile
from ...search.thread_table import Scored
from . import ann, hybrid, turn_head
from .ann_exact import Reader
from .entry import SearchHit
from .index_cache import ScopeCache
from .query import document_text
from .vectors import Matrix

__all__ = ["FUSION_DEPTH", "VectorHits", "bm25_hits", "depth_of", "ranked", "reranked"]

log = logging.getLogger("memstack.tiers.longterm")

FUSION_DEPTH: Final = 100
"""Each retriever contributes at least this many hits to fusion (more when more are asked)."""


def _candidates(
    cache: ScopeCache, index: Bm25Index, name: object, allowed: set[str] | None, key: object | None
) -> set[str] | npt.NDArray[np.bool_] | None:
    """``allowed`` as the index's slot mask, kept in ``cache.derived`` under ``key`` (the filters)
    until the next change: a filtered search then costs what an unfiltered one does
    (``filtered_vs_unfiltered`` in bench/search_speed.py)."""
    if allowed is None or key is None:
        return allowed
    found = cache.derived.get((name, key))
    if found is None:
        found = cache.derived[(name, key)] = index.mask(allowed)
    return cast(npt.NDArray[np.bool_], found)  # derived holds what this function stored


def bm25_hits(
    cache: ScopeCache,
    query: str,
    profile: SearchProfile,
    allowed: set[str] | None,
    depth: int,
    allowed_key: object | None = None,
) -> list[tuple[str, float]]:
    """The ``depth`` best BM25 ``(id, score)`` pairs: main field (+ RM3) plus the weighted context field.

    ``allowed_key`` (hashable, e.g. the filters) lets the candidate mask be reused until the cache
    changes."""
    index = cache.index(profile.bm25)
    candidates = _candidates(cache, index, ("bm25", profile.bm25), allowed, allowed_key)
    weights: dict[str, float] | None = None
    if profile.rm3_docs > 0:
        first = index.search(query, k=profile.rm3_docs, candidates=candidates)
        feedback = [(index.tokenize(cache.texts[i]), s) for i, s in first]
        weights = rm3_weights(
            index.tokenize(query), feedback, terms=profile.rm3_terms, query_weight=profile.rm3_query_weight
        )
    main = (
        index.search(query, depth, candidates)
        if weights is None
        else index.search_terms(weights, depth, candidates)
    )
    if not _merges_context(cache, profile):
        return main
    context = cache.context_index(profile.bm25, profile.context_window)
    in_context = _candidates(
        cache, context, ("context", profile.bm25, profile.context_window), allowed, allowed_key
    )
    extra = (
        context.search(query, depth, in_context)
        if weights is None
        else context.search_terms(weights, depth, in_context)
    )
    scores = dict(main)
    for entry_id, score in extra:
        scores[entry_id] = scores.get(entry_id, 0.0) + profile.context_weight * score
    # sorted() is stable: ties keep main-field order, then context order
    return sorted(scores.items(), key=lambda item: -item[1])[:depth]


def _merges_context(cache: ScopeCache, profile: SearchProfile) -> bool:
    """Whether :func:`bm25_hits` adds the conversation-context field's scores (its ``depth`` best of
    each field are merged, so a shallower search can rank differently)."""
    return profile.uses_context and len(cache.threads) > 0


def _vector_hits(
    cache: ScopeCache,
    embedder: Embedder,
    query_vector: Matrix,
    profile: SearchProfile,
    allowed: set[str] | None,
    depth: int,
    exact: Reader | None,
) -> tuple[list[tuple[str, float]], Background | None]:
    """The ``depth`` best ``(id, cosine)`` and the background of the cosines (None: no vector);
    from the scope's approximate graph when it has one (:mod:`.ann`, its hits re-scored from the
    float vectors ``exact`` reads)."""
    graph = cache.anns.get((embedder.model_id, embedder.dim))
    if graph is not None and ann.uses_graph(cache, profile):
        vectors = cache.vector_index(embedder.model_id, embedder.dim)
        read = exact if vectors.quantised else None  # a float index holds the exact vectors itself
        drafted = ann.draft(graph, vectors, query_vector, profile, allowed, depth, read)
        return ([], None) if drafted is None else (drafted.hits(read), drafted.background)
    ids, scores = hybrid.cosines(cache, embedder, query_vector)
    row_of = hybrid.row_index(cache, embedder)
    if profile.rocchio_docs > 0 and ids:
        _, matrix = hybrid.vector_matrix(cache, embedder)
        first = hybrid.top_hits(ids, scores, allowed, profile.rocchio_docs, row_of)
        feedback = matrix[:, [row_of[i] for i, _ in first]].T  # columns are entries
        moved = rocchio(query_vector, np.ascontiguousarray(feedback), profile.rocchio_weight)
        ids, scores = hybrid.cosines(cache, embedder, moved)
    if profile.uses_context and profile.context_vector_weight > 0 and len(cache.threads) and ids:
        neighbours = hybrid.neighbour_rows(cache, embedder, profile.context_window)
        scores = hybrid.with_neighbours(scores, neighbours, profile.context_vector_weight)
    background = Background(float(scores.mean()), float(scores.std())) if len(scores) else None
    return hybrid.top_hits(ids, scores, allowed, depth, row_of), background


def ranked(
    cache: ScopeCache,
    query: str,
    profile: SearchProfile,
    *,
    embedder: Embedder | None,
    query_vector: Matrix | None,
    allowed: set[str] | None,
    max_results: int,
    fusion: str | None,
    min_similarity: float | None,
    rerank_depth: int = 0,
    allowed_key: object | None = None,
    exact: Reader | None = None,
    vector: VectorHits | None = None,
) -> list[SearchHit]:
    """The ``max(max_results, rerank_depth)`` best entries for a non-blank ``query`` (copies, safe to
    hand out). The caller holds the cache's lock. ``fusion``: the caller's fusion profile, or None for
    the profile's (its ``conversation_fusion`` in a scope of conversation turns searched with vectors).
    ``exact``: reads the stored float vectors of a graph-backed search's hits (:mod:`.ann_exact`).
    ``vector``: the vector hits and their background found already (a graph-backed search's, whose
    exact pass read the engine without the lock), for ``depth_of(profile, max_results, rerank_depth)``.

    Raises:
        InvalidConfiguration: an unknown fusion profile.
    """
    keep = max(max_results, rerank_depth)
    depth = depth_of(profile, max_results, rerank_depth)
    spread = profile.propagates and len(cache.threads) > 0
    hits, second = _with_vectors(cache, embedder, query_vector, profile, allowed, depth, exact, vector)
    if second is None and not spread and not _merges_context(cache, profile):
        # BM25 alone answers its own first ``keep``: the first ``keep`` of a deeper list (one order:
        # score, then insertion), for a fraction of the ranking work
        bm25 = bm25_hits(cache, query, profile, allowed, keep, allowed_key)
        return [SearchHit(cache.entries[i].copy(), s, bm25=s, sources=("bm25",)) for i, s in bm25]
    bm25 = bm25_hits(cache, query, profile, allowed, depth, allowed_key)
    if second is None and not spread:
        return [SearchHit(cache.entries[i].copy(), s, bm25=s, sources=("bm25",)) for i, s in bm25[:keep]]
    # BM25 alone in conversations ranks as a hybrid search whose vectors found nothing: fused, then
    # propagated (the choice and its figures: bench/locomo_choices.py, "propagation in BM25-alone searches").
    background = None if second is None else second[2]
    if fusion is None and second is not None and spread and profile.conversation_fusion:
        fusion = profile.conversation_fusion
    fusion = profile.fusion if fusion is None else fusion
    mass = cache.index(profile.bm25).query_mass(query)
    fused = fuse_rows(
        bm25, hits, fusion, min_similarity=min_similarity, depth=depth, mass=mass, background=background
    )
    terms = fused_terms(bm25, fusion, mass=mass, background=background)
    fused = _spread(cache, query, fused, profile, allowed, keep, second, terms) if spread else fused[:keep]
    if terms is None:
        return [SearchHit(cache.entries[i].copy(), s, b, v, sources) for i, s, b, v, sources in fused]
    return [
        SearchHit(cache.entries[i].copy(), s, b, v, sources, *terms.parts(b, v))
        for i, s, b, v, sources in fused
    ]


def depth_of(profile: SearchProfile, max_results: int, rerank_depth: int) -> int:
    """How many hits each retriever gives fusion in a search of ``max_results`` (and a reranker's
    ``rerank_depth``)."""
    return max(profile.fusion_depth or FUSION_DEPTH, 5 * max_results, rerank_depth)


VectorHits = tuple[list[tuple[str, float]], Background | None]
"""A search's vector hits (best first) and the background of its cosines (None: no vector)."""
Vectors = tuple[Embedder, Matrix, Background | None]
"""A search's embedder, query vector and the background of its cosines (None: no vector)."""


def _with_vectors(
    cache: ScopeCache,
    embedder: Embedder | None,
    query_vector: Matrix | None,
    profile: SearchProfile,
    allowed: set[str] | None,
    depth: int,
    exact: Reader | None,
    found: VectorHits | None,
) -> tuple[list[tuple[str, float]], Vectors | None]:
    """The vector hits (``found``, or found here) and what the rest of the search reads of them
    (None: a search without vectors)."""
    if embedder is None or query_vector is None:
        return [], None
    if found is None:
        found = _vector_hits(cache, embedder, query_vector, profile, allowed, depth, exact)
    vector, background = found
    return vector, (embedder, query_vector, background)


def _spread(
    cache: ScopeCache,
    query: str,
    fused: list[Row],
    profile: SearchProfile,
    allowed: set[str] | None,
    keep: int,
    second: Vectors | None,
    terms: Terms | None,
) -> list[Row]:
    """The ``keep`` best of ``fused`` re-scored along conversations (:func:`_propagated`), then (with
    vectors and the profile's ``turn_rerank``) the first of them re-ordered by the turns' second stage
    (:mod:`memstack.search.turn_rerank`); a neighbour that no retriever found enters with no retriever
    score and the source ``"neighbours"``."""
    reorder = second if second is not None and second[2] is not None and profile.turn_rerank else None
    table = cache.thread_table()
    scored = Scored.of(table, [row[0] for row in fused], [row[1] for row in fused])
    scored = _propagated(table, scored, query, profile, allowed)
    found = {row[0]: row for row in fused}
    out: list[Row] = []
    for entry_id, score in scored.top(keep if reorder is None else max(keep, turn_head.DEPTH)):
        row = found.get(entry_id)
        out.append(
            (entry_id, score, None, None, ("neighbours",)) if row is None else (entry_id, score, *row[2:])
        )
    if reorder is None:
        return out
    embedder, query_vector, background = reorder
    assert background is not None  # reorder is set only with a background
    return turn_head.reordered(cache, embedder, query_vector, background, terms, out)[:keep]


def _propagated(
    table: thread_table.ThreadTable,
    scored: Scored,
    query: str,
    profile: SearchProfile,
    allowed: set[str] | None,
) -> Scored:
    """``scored`` re-scored along conversations (:mod:`memstack.search.propagation`, run on the
    scope's :class:`~memstack.search.thread_table.ThreadTable`) by the profile's neighbour, speaker
    and session weights."""
    if profile.neighbour_weight > 0 and profile.neighbour_window > 0:
        scored = thread_table.propagate(
            table,
            scored,
            profile.neighbour_window,
            profile.neighbour_weight,
            # The table holds cached entries only (ConversationThreads drops deleted ids), so
            # only the search's filters can keep a neighbour out.
            allowed=None if allowed is None else allowed.__contains__,
        )
    if profile.speaker_weight > 0:
        scored = thread_table.speaker_boost(table, scored, query, profile.speaker_weight)
    if profile.session_weight > 0:
        scored = thread_table.session_boost(table, scored, profile.session_weight)
    return scored


def reranked(reranker: Reranker, query: str, hits: list[SearchHit], max_results: int) -> list[SearchHit]:
    """``hits`` with the first ``reranker.depth`` re-ordered by the reranker, cut to ``max_results``.

    Called without any lock held (the reranker may be a remote server). A failing reranker leaves the
    order as it was (a warning is logged), as a failing embedder leaves BM25 alone.
    """
    head, tail = hits[: reranker.depth], hits[reranker.depth :]
    if not head:
        return hits[:max_results]
    try:
        scores = reranker.rerank(query, [document_text(h.entry) for h in head])
        if len(scores) != len(head):
            raise ValueError(f"{len(scores)} scores for {len(head)} documents")
    except Exception:  # a rerank failure degrades to the fused order, as an embedder failure does
        log.warning("reranking failed; the fused order is kept", exc_info=True)
        return hits[:max_results]
    order = sorted(range(len(head)), key=lambda n: -scores[n])
    moved = [
        SearchHit(head[n].entry, float(scores[n]), head[n].bm25, head[n].vector, (*head[n].sources, "rerank"))
        for n in order
    ]
    return (moved + tail)[:max_results]
