"""Fusing BM25 and vector results, with fusion profiles as data.

``default``
    A weighted sum, 0.6 · BM25 + 0.4 · vector, of the two retrievers' scores, each min-max normalised
    over its own candidate list: ``(score - min) / (max - min)``, so the best candidate of each retriever
    scores 1 and its worst 0 (a list whose scores are all equal scores 1). Cosines below
    ``min_similarity`` (0.3) are dropped before normalising. A retriever that did not find an id
    contributes 0, so being found by both retrievers never lowers an entry. When the vector list is
    *complete* (shorter than the depth it was asked for: it holds every vector of the scope or of the
    filter, as in a tiny scope), its worst hit is a real hit, not the cut of a longer list, so ``min``
    is ``min_similarity`` instead: the worst of two relevant memories no longer scores 0. A search
    over a scope larger than the depth ranks exactly as before (LoCoMo figures unchanged). The
    candidate lists are each retriever's top ``max(100, 5 * max_results)``
    (:class:`~memstack.tiers.longterm.LongTermMemory`; a search profile's ``fusion_depth`` raises the 100).
    The ``default`` search profile then propagates the fused scores along conversations
    (:mod:`memstack.search.propagation`), which :func:`fuse` knows nothing of.
``equal``
    The same with equal weights (0.5 / 0.5): the default until the weights were chosen on a tuning half.
``weighted-raw``
    ``0.5 * bm25 / max_bm25 + 0.5 * cosine`` (cosines below 0.3 ignored). BM25 reaches 1 while a cosine
    rarely exceeds 0.7, so vectors weighed less than their 0.5.
``rockbot``
    RockBot's ``HybridRanker`` exactly: BM25 scores divided by the maximum, a vector
    score kept only if ``>= min_similarity`` (0.5), the mean when both retrievers scored an id, the single
    score otherwise, sorted descending; ids are matched case-insensitively. Averaging demotes entries
    both retrievers found (BM25 1.0 alone beats BM25 1.0 + cosine 0.6 = 0.8); kept for identical rankings.
``evidence``
    Each retriever's score as evidence comparable across queries (:mod:`memstack.search.evidence`):
    BM25 over the query's IDF mass, the cosine in standard deviations over the scope's background;
    no similarity floor. The ``default`` search profile's fusion.
``rrf``
    Reciprocal-rank fusion: ``Σ weight / (rrf_k + rank)`` over the retrievers that found the id.

What was chosen, and on which data (the full record is ``bench/locomo_choices.py``):

* Min-max normalisation and the 0.3 threshold were chosen by comparing the seven variants below on
  the *whole* LoCoMo development split (6 conversations) -- the same data the bench then reported, so
  those figures flatter the choice. They are kept as they were measured (one entry per turn, ``plain``
  search profile, local int8 all-MiniLM-L6-v2, recall@10 / recall@20, 883 questions of categories 1-4).
* The weights 0.6 / 0.4 of ``default`` were chosen afterwards on the *tuning half* only (conversations
  conv-26, conv-41, conv-43), from vector weights 0.2 to 0.6 jointly with the conversation-context
  weights of the ``default`` search profile (the rule: best hybrid recall@10, differences under 0.005
  count as ties, a loss of recall@1 over 0.01 disqualifies); they became the default because
  they also won on the report half (conv-30, conv-42, conv-44), which played no part in the choice.
* Re-checked later on the tuning half alone, with the ``default`` search profile (hybrid R@1 / R@10 /
  R@20, default 0.330 / 0.769 / 0.840): thresholds 0.2, 0.25 and 0.35 give the same figures, no threshold
  0.330 / 0.769 / 0.839 (the context-boosted cosines rarely fall under 0.3), so 0.3 stays; ``rrf`` with
  the 0.6 / 0.4 weights gives 0.288 / 0.737 / 0.820 at ``rrf_k`` 60 and 0.299 / 0.764 / 0.837 at 20
  (behind min-max, and 60 loses over 0.01 of R@1 against ``plain``); candidate depths 200, 400 and all
  give R@10 0.768, 0.770, 0.774 (ties) with R@20 0.852-0.856, so the cheaper 100 stays.
* The held-out four conversations were never looked at.

==============================  ===========  ===========  ===========  ===========  ===========
fusion (whole dev, pre-split)   multi-hop    temporal     open-domain  single-hop   overall
==============================  ===========  ===========  ===========  ===========  ===========
``equal`` (min-max, >= 0.3)     0.394 0.490  0.768 0.822  0.338 0.410  0.734 0.840  0.652 0.744
min-max, no threshold           0.395 0.487  0.768 0.822  0.338 0.400  0.734 0.840  0.652 0.742
z-scores, no threshold          0.395 0.481  0.762 0.824  0.350 0.420  0.747 0.835  0.659 0.740
``weighted-raw``                0.409 0.487  0.776 0.816  0.294 0.376  0.727 0.795  0.650 0.715
max-normalised both, >= 0.3     0.399 0.470  0.754 0.798  0.297 0.386  0.686 0.763  0.622 0.691
``rockbot``                     0.352 0.451  0.751 0.806  0.345 0.389  0.703 0.767  0.624 0.691
``rrf`` (k 60, >= 0.3)          0.344 0.441  0.693 0.754  0.234 0.309  0.640 0.716  0.569 0.647
==============================  ===========  ===========  ===========  ===========  ===========

z-scores: ``(score - mean) / std`` over each list, an id a list lacks taking that list's lowest.
The threshold is kept because min-max alone would lift the best of only weak cosines to 1.

Ties keep the order of first appearance (BM25 list first, then the vector list).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, TypedDict, Unpack

import numpy as np
import numpy.typing as npt

from memstack.foundation.errors import InvalidConfiguration, InvalidInput
from memstack.search._lookup import lookup
from memstack.search.evidence import SOURCES, Background, Row, Terms, evidence_terms, terms_rows

__all__ = ["FUSION_PROFILES", "FuseOptions", "FusionProfile", "Hit", "Row", "cosine", "fuse", "fuse_rows"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One fused result: ``score`` is the fused score; ``bm25`` and ``vector`` are the raw input scores
    that were used (``None`` when that retriever did not find the id or the cosine was below the
    threshold); ``sources`` names the retrievers that contributed, in the order ``("bm25", "vector")``."""

    id: str
    score: float
    bm25: float | None
    vector: float | None
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FusionProfile:
    """How :func:`fuse` combines the two result lists.

    ``method``: ``"mean"`` (RockBot), ``"weighted"`` or ``"rrf"``; ``bm25_weight`` / ``vector_weight``
    weigh the retrievers in ``"weighted"`` and ``"rrf"``; ``min_similarity``: vector scores below it are
    ignored; ``rrf_k``: the rank offset of ``"rrf"``; ``fold_ids``: match ids case-insensitively;
    ``normalise`` (``"mean"`` and ``"weighted"``): ``"bm25-max"`` divides BM25 scores by their maximum and
    keeps cosines raw, ``"min-max"`` maps each retriever's candidate scores to ``[0, 1]``.
    """

    name: str
    method: Literal["mean", "weighted", "rrf", "evidence"]
    min_similarity: float = 0.0
    bm25_weight: float = 0.5
    vector_weight: float = 0.5
    rrf_k: float = 60.0
    fold_ids: bool = False
    normalise: Literal["bm25-max", "min-max"] = "bm25-max"
    vector_scale: float = 3.0
    vector_shift: float = 0.0

    def __post_init__(self) -> None:
        if self.method not in ("mean", "weighted", "rrf", "evidence"):
            raise InvalidConfiguration(
                f"FusionProfile {self.name!r}: method={self.method!r} must be 'mean', 'weighted', 'rrf'"
                " or 'evidence'"
            )
        if not (math.isfinite(self.vector_scale) and self.vector_scale > 0):
            raise InvalidConfiguration(
                f"FusionProfile {self.name!r}: vector_scale={self.vector_scale!r} must be > 0"
            )
        for field in ("bm25_weight", "vector_weight"):
            value = getattr(self, field)
            if not (math.isfinite(value) and value >= 0):
                raise InvalidConfiguration(f"FusionProfile {self.name!r}: {field}={value!r} must be >= 0")
        if self.normalise not in ("bm25-max", "min-max"):
            raise InvalidConfiguration(
                f"FusionProfile {self.name!r}: normalise={self.normalise!r} must be 'bm25-max' or 'min-max'"
            )
        if not (math.isfinite(self.rrf_k) and self.rrf_k >= 0):
            raise InvalidConfiguration(f"FusionProfile {self.name!r}: rrf_k={self.rrf_k!r} must be >= 0")
        if math.isnan(self.min_similarity):
            raise InvalidConfiguration(f"FusionProfile {self.name!r}: min_similarity must not be NaN")


_EVIDENCE: Final = FusionProfile(
    name="evidence",
    method="evidence",
    min_similarity=-1.0,
    bm25_weight=0.46,
    vector_weight=0.54,
    vector_shift=1.5,
)

FUSION_PROFILES: dict[str, FusionProfile] = {
    "default": FusionProfile(
        name="default",
        method="weighted",
        min_similarity=0.3,
        normalise="min-max",
        bm25_weight=0.6,
        vector_weight=0.4,
    ),
    "equal": FusionProfile(name="equal", method="weighted", min_similarity=0.3, normalise="min-max"),
    "weighted-raw": FusionProfile(name="weighted-raw", method="weighted", min_similarity=0.3),
    "rockbot": FusionProfile(name="rockbot", method="mean", min_similarity=0.5, fold_ids=True),
    "rrf": FusionProfile(name="rrf", method="rrf", min_similarity=0.3),
    "evidence": _EVIDENCE,
    # The default search profile's fusion for scopes holding conversation turns, searched with vectors:
    # ``evidence`` weighted towards BM25, as a turn is short and its cosine margin noisy, while the
    # context field and propagation already carry what its neighbours say (figures in docs/recall.md).
    "evidence-turns": replace(_EVIDENCE, name="evidence-turns", bm25_weight=0.7, vector_weight=0.3),
}


def _profile(profile: str | FusionProfile) -> FusionProfile:
    return lookup(FUSION_PROFILES, profile, FusionProfile, "fusion")


def _min_max(scores: dict[str, float], floor: float | None = None) -> dict[str, float]:
    """``(s - min) / (max - min)`` over ``scores`` (``min``: ``floor`` when given and lower than every
    score); all 1.0 when the scores are all equal."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if floor is not None and floor < low:
        low = floor
    if not high > low:
        return dict.fromkeys(scores, 1.0)
    return {key: (score - low) / (high - low) for key, score in scores.items()}


class FuseOptions(TypedDict, total=False):
    """The keywords of :func:`fuse` and :func:`fuse_rows` (each None when not given).

    ``min_similarity`` overrides the profile's threshold. ``depth``: how many candidates the vector
    retriever was asked for; a shorter ``vector`` list is complete, and min-max then normalises it
    from ``min_similarity`` (module docstring). ``mass`` (the query's IDF mass) and ``background``
    (its cosines over the scope): what the ``evidence`` method weighs the two scores by
    (:mod:`memstack.search.evidence`); without them BM25 scores are taken over their maximum and
    cosines over no background.
    """

    min_similarity: float | None
    depth: int | None
    mass: float | None
    background: Background | None


def fuse(
    bm25: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    profile: str | FusionProfile = "default",
    *,
    k: int | None = None,
    **options: Unpack[FuseOptions],
) -> list[Hit]:
    """Fuse a BM25 result list and a vector result list (``(id, score)`` pairs) into ranked :class:`Hit`s.

    ``bm25`` is expected best first (as :meth:`Bm25Index.search` returns it); its maximum is used for
    normalisation either way. ``k`` caps the result; ``options``: :class:`FuseOptions`.

    Raises:
        InvalidConfiguration: unknown profile name.
        InvalidInput: ``k`` is negative, or ``min_similarity`` is NaN.
    """
    prof = _resolved(profile, options.pop("min_similarity", None))
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
        raise InvalidInput(f"k={k!r} must be None or an int >= 0")
    rows = fuse_rows(bm25, vector, prof, **options)
    return [Hit(*row) for row in (rows if k is None else rows[:k])]


def fused_terms(
    bm25: Sequence[tuple[str, float]],
    profile: str | FusionProfile,
    *,
    mass: float | None,
    background: Background | None,
) -> Terms | None:
    """How ``profile`` splits a fused score into its BM25 and vector terms (None: a fusion profile
    whose scores are not such a sum, every method but ``evidence``)."""
    prof = _profile(profile)
    return _evidence_terms(prof, bm25, mass, background) if prof.method == "evidence" else None


def _evidence_terms(
    prof: FusionProfile, bm25: Sequence[tuple[str, float]], mass: float | None, background: Background | None
) -> Terms:
    return evidence_terms(
        bm25,
        bm25_weight=prof.bm25_weight,
        vector_weight=prof.vector_weight,
        vector_scale=prof.vector_scale,
        vector_shift=prof.vector_shift,
        mass=mass,
        background=background,
    )


def fuse_rows(
    bm25: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    profile: str | FusionProfile = "default",
    **options: Unpack[FuseOptions],
) -> list[Row]:
    """:func:`fuse` as tuples (:data:`Row`), every fused result: for callers that keep only a few
    of ~200 results (creating a frozen :class:`Hit` costs ~1 us, a tuple ~0.02).

    Raises:
        InvalidConfiguration: unknown profile name.
        InvalidInput: ``min_similarity`` is NaN.
    """
    prof = _resolved(profile, options.get("min_similarity"))
    if prof.method == "evidence":
        kept = [(i, s) for i, s in vector if s >= prof.min_similarity]
        terms = _evidence_terms(prof, bm25, options.get("mass"), options.get("background"))
        return terms_rows(bm25, kept, terms)
    return _rows(bm25, vector, prof, options.get("depth"))


def _resolved(profile: str | FusionProfile, min_similarity: float | None) -> FusionProfile:
    prof = _profile(profile)
    if min_similarity is not None:
        if math.isnan(min_similarity):
            raise InvalidInput("min_similarity=nan must be a number")
        prof = replace(prof, min_similarity=min_similarity)
    return prof


def _rows(
    bm25: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    prof: FusionProfile,
    depth: int | None = None,
) -> list[Row]:
    fold = prof.fold_ids

    top = max((s for _, s in bm25), default=0.0)
    names: dict[str, str] = {}  # key -> first spelling seen
    bm25_raw: dict[str, float] = {}
    bm25_norm: dict[str, float] = {}
    bm25_rank: dict[str, int] = {}
    if top > 0:
        for doc_id, score in bm25:
            kk = doc_id.casefold() if fold else doc_id
            if kk in bm25_raw:
                continue
            names.setdefault(kk, doc_id)
            bm25_raw[kk] = score
            bm25_norm[kk] = score / top
            bm25_rank[kk] = len(bm25_rank) + 1
    vec: dict[str, float] = {}
    vec_rank: dict[str, int] = {}
    for doc_id, score in vector:
        kk = doc_id.casefold() if fold else doc_id
        if kk in vec or not score >= prof.min_similarity:
            continue
        names.setdefault(kk, doc_id)
        vec[kk] = score
        vec_rank[kk] = len(vec_rank) + 1

    vec_norm = vec
    if prof.normalise == "min-max":
        # A complete vector list's worst hit is a real hit: the threshold is where relevance ends.
        complete = depth is not None and len(vector) < depth
        bm25_norm = _min_max(bm25_raw)
        vec_norm = _min_max(vec, prof.min_similarity if complete else None)

    rows: list[Row] = []
    for kk, doc_id in names.items():
        b, v = bm25_norm.get(kk), vec.get(kk)
        score = _score(prof, b, vec_norm.get(kk), bm25_rank.get(kk), vec_rank.get(kk))
        rows.append((doc_id, float(score), bm25_raw.get(kk), v, SOURCES[b is not None, v is not None]))
    rows.sort(key=lambda row: -row[1])
    return rows


def _score(
    prof: FusionProfile, b: float | None, vn: float | None, b_rank: int | None, v_rank: int | None
) -> float:
    """One document's fused score from its normalised scores (``None`` when a list missed it) and its
    1-based ranks in each list."""
    if prof.method == "mean":
        parts = [x for x in (b, vn) if x is not None]
        return sum(parts) / len(parts)
    if prof.method == "weighted":
        return prof.bm25_weight * (b or 0.0) + prof.vector_weight * (vn or 0.0)
    score = 0.0
    if b_rank is not None:
        score += prof.bm25_weight / (prof.rrf_k + b_rank)
    if v_rank is not None:
        score += prof.vector_weight / (prof.rrf_k + v_rank)
    return score


def cosine(a: Sequence[float] | npt.ArrayLike, b: Sequence[float] | npt.ArrayLike) -> float:
    """Cosine similarity as RockBot computes it: 0.0 when the lengths differ, either vector is empty,
    or either has zero magnitude; otherwise ``dot / (|a|·|b|)`` (may be negative). Never raises on
    those cases."""
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    if x.size == 0 or x.size != y.size:
        return 0.0
    na, nb = float(np.linalg.norm(x)), float(np.linalg.norm(y))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(x, y) / (na * nb))
