"""Search profiles as data: which BM25 profile, fusion and query-time options one search uses.

A :class:`SearchProfile` names a BM25 profile (:data:`~memstack.search.PROFILES`) and a fusion profile
(:data:`~memstack.search.FUSION_PROFILES`) and switches these options on or off:

conversation context (``context_window`` > 0)
    An entry that carries conversation provenance (see :mod:`memstack.tiers.longterm.provenance`) is also
    indexed with a second, lower-weight field: its speaker, its session date and the contents of the
    ``context_window`` turns before and after it in the same conversation. The BM25 score is
    ``main + context_weight * context``, each field scored by its own index (own N, avgdl, df). Entries
    without provenance have an empty context field and score as before. On the vector side
    (``context_vector_weight`` > 0) an entry's cosine becomes ``cos + context_vector_weight · max(0,
    best cosine among the same window of neighbours)``; that score is what fusion and ``SearchHit.vector``
    then see.
RM3 (``rm3_docs`` > 0)
    Pseudo-relevance feedback for BM25: the ``rm3_docs`` best hits of the query form a relevance model
    ``P(w|R) = Σ_d (s_d / Σs) · tf(w, d) / |d|``; its ``rm3_terms`` most likely terms (query terms
    included) are mixed with the query's own term distribution,
    ``rm3_query_weight · P(w|Q) + (1 - rm3_query_weight) · P(w|R)``, and that weighted query is run
    again (each term's BM25 contribution multiplied by its weight). Costs one more BM25 search and
    tokenising the feedback documents.
Rocchio (``rocchio_docs`` > 0)
    Pseudo-relevance feedback for vectors: ``q' = q + rocchio_weight · mean(v_1..v_m)`` over the
    ``rocchio_docs`` nearest entries, normalised, and the cosines are computed again with ``q'``. Costs
    one more matrix-vector product.
propagation along conversations (``neighbour_weight``, ``session_weight``, ``speaker_weight`` > 0)
    After fusion, over the fused candidates (a BM25-alone search is fused too, as a hybrid search whose
    vectors found nothing, so its scores are fused scores; pure functions in
    :mod:`memstack.search.propagation`, applied in this order, each reading the scores the previous
    step left): a turn gets ``neighbour_weight`` times the best fused score among its
    ``neighbour_window`` conversation neighbours each side (a neighbour that neither retriever found
    enters the list with that score alone, source ``"neighbours"``, if the search's filters allow it);
    ``speaker_weight`` is added to the turns whose speaker the query names (any word of the speaker's
    name among the query's words, casefolded); then a turn gets ``session_weight`` times the best
    score of its session (same conversation id and session ``time``). Only entries with conversation
    provenance take part; a scope without any is searched exactly as without the options. Cost: numpy
    passes over the ~2 x ``fusion_depth`` fused candidates and their neighbours
    (:mod:`memstack.search.thread_table`, on a table of the scope's turns built once per change, ~0.15 s
    at 100,000 turns): a median of 1.4 ms per search at 100,000 turns under cProfile, where the
    per-id dictionary pass it replaced took 3.3 ms (``bench/search_speed.py --conversations`` corpus,
    one shared 2-core machine).
conversation fusion (``conversation_fusion``, a fusion profile name; empty: none)
    The fusion a search with vectors uses instead of ``fusion`` when its scope holds conversation
    turns (and the caller did not ask for a fusion of its own). The ``default`` profile uses
    ``evidence-turns`` (0.7 BM25 / 0.3 vector, against 0.46 / 0.54) and no neighbour cosines on the
    vector side (``context_vector_weight`` 0): a turn is short, its cosine margin over the scope is
    noisy, and the context field and propagation already bring in what its neighbours say. Chosen on
    the tune half of ``bench/recall_suite.py`` (LoCoMo conv-26/41/43) as the weights whose hybrid
    never loses to BM25 alone at R@1, R@3 or R@10, then best R@10; figures in ``docs/recall.md``.
the turns' second stage (``turn_rerank``)
    After propagation, in a scope of conversation turns searched with vectors, the 50 best turns are
    re-scored by a linear model over features the search already has (the turn's length and question
    mark, the terms of its fused score, its session's and neighbours' scores, its cosine's margin;
    :mod:`memstack.search.turn_rerank`); the score stays on the fused scale. The ``default`` profile
    uses it: it was fitted on the tune half of ``bench/recall_suite.py`` and measured on the report
    half once (figures in ``docs/recall.md``).
candidate depth (``fusion_depth``)
    How many hits each retriever hands to fusion: ``max(fusion_depth, 5 * max_results)``, or
    ``max(100, 5 * max_results)`` when 0 (``memstack.tiers.longterm.retrieve.FUSION_DEPTH``).

Profiles (every choice, and the half of the LoCoMo development split it was chosen on, is recorded in
``bench/locomo_choices.py``; the rule: best recall@10 on the tuning half, then kept only if it also wins
on the report half):

``default``
    the conversation context field (window 2, weight 0.5; no neighbour cosines on the vector side),
    the ``evidence`` fusion (:mod:`memstack.search.evidence`; ``evidence-turns`` for a scope of
    conversation turns searched with vectors), propagation with neighbour weight 0.5, speaker and
    session weights 0.3 (window 1, candidate depth 100), then the turns' second stage. The choices
    and their figures on both halves are in ``bench/locomo_choices.py`` and ``docs/recall.md``.
    Entries without conversation provenance are searched as by ``plain`` (BM25) or with the
    ``evidence`` fusion (hybrid).
``context``
    ``default`` without propagation: the default before propagation was chosen.
``plain``
    the previous default: ``default`` BM25, ``equal`` fusion (0.5 / 0.5), no option.
``rockbot``
    RockBot's BM25 and fusion exactly.
``conversation``
    ``plain``'s equal fusion plus the context field, to measure the field alone.
``rm3``, ``rocchio``
    ``plain`` plus feedback (3 documents; RM3: 10 terms, query weight 0.7; Rocchio: weight 0.2). Neither
    beat ``plain`` on the tuning half (recall@10 ties, recall@1 lower for RM3), so neither is a default.
    Cost: one more BM25 search plus tokenising 3 documents (RM3), one more matrix-vector product (Rocchio).
    Measured per query on the LoCoMo development split (883 searches of scopes of about 570 entries,
    a shared and loaded 2-core machine, so only same-run ratios mean much): BM25 ``plain`` 1.98 ms,
    ``rm3`` 4.44 ms, ``default`` 3.58 ms; hybrid ``plain`` 5.49 ms, ``rocchio`` 8.11 ms, ``default``
    11.0 ms (query embeddings cached, so model time is excluded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memstack.foundation.errors import InvalidConfiguration
from memstack.search._lookup import lookup
from memstack.search.fusion import FUSION_PROFILES
from memstack.search.profiles import PROFILES

__all__ = ["SEARCH_PROFILES", "SearchProfile", "get_search_profile"]


@dataclass(frozen=True, slots=True)
class SearchProfile:
    """One retrieval configuration (see the module docstring for what each option does).

    Raises:
        InvalidConfiguration: an unknown BM25 or fusion profile, or an option out of range.
    """

    name: str
    bm25: str = "default"
    fusion: str = "default"
    context_window: int = 0
    context_weight: float = 0.0
    context_vector_weight: float = 0.0
    rm3_docs: int = 0
    rm3_terms: int = 10
    rm3_query_weight: float = 0.5
    rocchio_docs: int = 0
    rocchio_weight: float = 0.5
    fusion_depth: int = 0
    neighbour_window: int = 1
    neighbour_weight: float = 0.0
    session_weight: float = 0.0
    speaker_weight: float = 0.0
    conversation_fusion: str = ""
    turn_rerank: bool = False

    def __post_init__(self) -> None:
        if self.bm25 not in PROFILES:
            raise InvalidConfiguration(
                f"SearchProfile {self.name!r}: bm25={self.bm25!r} is not a BM25 profile"
            )
        for field in ("fusion", "conversation_fusion"):
            value = getattr(self, field)
            if value not in FUSION_PROFILES and (field == "fusion" or value != ""):
                raise InvalidConfiguration(
                    f"SearchProfile {self.name!r}: {field}={value!r} is not a fusion profile"
                )
        for field in ("context_window", "rm3_docs", "rm3_terms", "rocchio_docs", "neighbour_window"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1000:
                raise InvalidConfiguration(
                    f"SearchProfile {self.name!r}: {field}={value!r} must be an int within [0, 1000]"
                )
        depth = self.fusion_depth
        if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= 100_000:
            raise InvalidConfiguration(
                f"SearchProfile {self.name!r}: fusion_depth={depth!r} must be an int within [0, 100000]"
            )
        for field in (
            "context_weight",
            "context_vector_weight",
            "rocchio_weight",
            "neighbour_weight",
            "session_weight",
            "speaker_weight",
        ):
            value = getattr(self, field)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise InvalidConfiguration(f"SearchProfile {self.name!r}: {field}={value!r} must be >= 0")
        weight = self.rm3_query_weight
        if not (isinstance(weight, (int, float)) and 0.0 <= weight <= 1.0):
            raise InvalidConfiguration(
                f"SearchProfile {self.name!r}: rm3_query_weight={weight!r} must be within [0, 1]"
            )

    @property
    def uses_context(self) -> bool:
        """True when the conversation-context field takes part."""
        return self.context_window > 0 and self.context_weight > 0

    @property
    def propagates(self) -> bool:
        """True when fused scores are propagated along conversations (neighbours, speakers, sessions)."""
        return (
            (self.neighbour_weight > 0 and self.neighbour_window > 0)
            or self.session_weight > 0
            or self.speaker_weight > 0
        )


SEARCH_PROFILES: dict[str, SearchProfile] = {
    "default": SearchProfile(
        name="default",
        fusion="evidence",
        context_window=2,
        context_weight=0.5,
        context_vector_weight=0.0,
        conversation_fusion="evidence-turns",
        neighbour_weight=0.5,
        session_weight=0.3,
        speaker_weight=0.3,
        turn_rerank=True,
    ),
    "context": SearchProfile(name="context", context_window=2, context_weight=0.5, context_vector_weight=0.5),
    "plain": SearchProfile(name="plain", fusion="equal"),
    "rockbot": SearchProfile(name="rockbot", bm25="rockbot", fusion="rockbot"),
    "conversation": SearchProfile(
        name="conversation", fusion="equal", context_window=2, context_weight=0.5, context_vector_weight=0.5
    ),
    "rm3": SearchProfile(name="rm3", fusion="equal", rm3_docs=3, rm3_terms=10, rm3_query_weight=0.7),
    "rocchio": SearchProfile(name="rocchio", fusion="equal", rocchio_docs=3, rocchio_weight=0.2),
}


def get_search_profile(profile: str | SearchProfile) -> SearchProfile:
    """Resolve a search profile name (or pass a :class:`SearchProfile` through).

    Raises:
        InvalidConfiguration: unknown profile name.
    """
    return lookup(SEARCH_PROFILES, profile, SearchProfile, "search")
