"""Fusing BM25 and vector results, with fusion profiles as data.

``rockbot``
    The seed's ``HybridRanker`` exactly (spec items 24-28): BM25 scores divided by the maximum, a vector
    score kept only if ``>= min_similarity`` (0.5), the mean when both retrievers scored an id, the single
    score otherwise, sorted descending; ids are matched case-insensitively. Averaging demotes entries
    both retrievers found (BM25 1.0 alone beats BM25 1.0 + cosine 0.6 = 0.8); kept for identical rankings.
``default``
    A weighted sum of the max-normalised BM25 score and the cosine (0 for a retriever that did not find
    the id), so being found by both retrievers never lowers an entry.
``rrf``
    Reciprocal-rank fusion: ``Σ weight / (rrf_k + rank)`` over the retrievers that found the id.

Why ``default`` is the weighted sum (0.5 / 0.5, cosine threshold 0.3): on the LoCoMo development split
(883 questions of categories 1-4, one entry per turn, ``default`` BM25 top 50 + the local int8
all-MiniLM-L6-v2 top 50), recall@10 was 0.615 for BM25 alone, 0.475 for vectors alone, 0.621 for
``rockbot``, 0.643 for ``default`` and 0.582 for ``rrf`` (recall@20: 0.670, 0.586, 0.688, 0.717, 0.694).
The weights were not fitted beyond comparing 0.3 / 0.5 / 0.7; they are parameters of the profile.

Ties keep the order of first appearance (BM25 list first, then the vector list).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from memstack.errors import InvalidConfiguration, InvalidInput

__all__ = ["FUSION_PROFILES", "FusionProfile", "Hit", "cosine", "fuse"]


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

    ``method``: ``"mean"`` (the seed), ``"weighted"`` or ``"rrf"``; ``bm25_weight`` / ``vector_weight``
    weigh the retrievers in ``"weighted"`` and ``"rrf"``; ``min_similarity``: vector scores below it are
    ignored; ``rrf_k``: the rank offset of ``"rrf"``; ``fold_ids``: match ids case-insensitively.
    """

    name: str
    method: Literal["mean", "weighted", "rrf"]
    min_similarity: float = 0.0
    bm25_weight: float = 0.5
    vector_weight: float = 0.5
    rrf_k: float = 60.0
    fold_ids: bool = False

    def __post_init__(self) -> None:
        if self.method not in ("mean", "weighted", "rrf"):
            raise InvalidConfiguration(
                f"FusionProfile {self.name!r}: method={self.method!r} must be 'mean', 'weighted' or 'rrf'"
            )
        for field in ("bm25_weight", "vector_weight"):
            value = getattr(self, field)
            if not (math.isfinite(value) and value >= 0):
                raise InvalidConfiguration(f"FusionProfile {self.name!r}: {field}={value!r} must be >= 0")
        if not (math.isfinite(self.rrf_k) and self.rrf_k >= 0):
            raise InvalidConfiguration(f"FusionProfile {self.name!r}: rrf_k={self.rrf_k!r} must be >= 0")
        if math.isnan(self.min_similarity):
            raise InvalidConfiguration(f"FusionProfile {self.name!r}: min_similarity must not be NaN")


FUSION_PROFILES: dict[str, FusionProfile] = {
    "default": FusionProfile(name="default", method="weighted", min_similarity=0.3),
    "rockbot": FusionProfile(name="rockbot", method="mean", min_similarity=0.5, fold_ids=True),
    "rrf": FusionProfile(name="rrf", method="rrf", min_similarity=0.3),
}


def _profile(profile: str | FusionProfile) -> FusionProfile:
    if isinstance(profile, FusionProfile):
        return profile
    found = FUSION_PROFILES.get(profile)
    if found is None:
        raise InvalidConfiguration(f"fusion profile {profile!r} is unknown; known: {sorted(FUSION_PROFILES)}")
    return found


def fuse(
    bm25: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    profile: str | FusionProfile = "default",
    *,
    min_similarity: float | None = None,
    k: int | None = None,
) -> list[Hit]:
    """Fuse a BM25 result list and a vector result list (``(id, score)`` pairs) into ranked :class:`Hit`s.

    ``bm25`` is expected best first (as :meth:`Bm25Index.search` returns it); its maximum is used for
    normalisation either way. ``min_similarity`` overrides the profile's threshold; ``k`` caps the result.

    Raises:
        InvalidConfiguration: unknown profile name.
        InvalidInput: ``k`` is negative, or ``min_similarity`` is NaN.
    """
    prof = _profile(profile)
    if min_similarity is not None:
        if math.isnan(min_similarity):
            raise InvalidInput("min_similarity=nan must be a number")
        prof = replace(prof, min_similarity=min_similarity)
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
        raise InvalidInput(f"k={k!r} must be None or an int >= 0")

    def key(doc_id: str) -> str:
        return doc_id.casefold() if prof.fold_ids else doc_id

    top = max((s for _, s in bm25), default=0.0)
    names: dict[str, str] = {}  # key -> first spelling seen
    bm25_raw: dict[str, float] = {}
    bm25_norm: dict[str, float] = {}
    bm25_rank: dict[str, int] = {}
    if top > 0:
        for doc_id, score in bm25:
            kk = key(doc_id)
            if kk in bm25_raw:
                continue
            names.setdefault(kk, doc_id)
            bm25_raw[kk] = score
            bm25_norm[kk] = score / top
            bm25_rank[kk] = len(bm25_rank) + 1
    vec: dict[str, float] = {}
    vec_rank: dict[str, int] = {}
    for doc_id, score in vector:
        kk = key(doc_id)
        if kk in vec or not score >= prof.min_similarity:
            continue
        names.setdefault(kk, doc_id)
        vec[kk] = score
        vec_rank[kk] = len(vec_rank) + 1

    hits: list[Hit] = []
    for kk, doc_id in names.items():
        b, v = bm25_norm.get(kk), vec.get(kk)
        if prof.method == "mean":
            parts = [x for x in (b, v) if x is not None]
            score = sum(parts) / len(parts)
        elif prof.method == "weighted":
            score = prof.bm25_weight * (b or 0.0) + prof.vector_weight * (v or 0.0)
        else:
            score = 0.0
            if kk in bm25_rank:
                score += prof.bm25_weight / (prof.rrf_k + bm25_rank[kk])
            if kk in vec_rank:
                score += prof.vector_weight / (prof.rrf_k + vec_rank[kk])
        sources = tuple(name for name, x in (("bm25", b), ("vector", v)) if x is not None)
        hits.append(Hit(doc_id, float(score), bm25_raw.get(kk), v, sources))
    hits.sort(key=lambda h: -h.score)
    return hits if k is None else hits[:k]


def cosine(a: Sequence[float] | npt.ArrayLike, b: Sequence[float] | npt.ArrayLike) -> float:
    """Cosine similarity as the seed computes it: 0.0 when the lengths differ, either vector is empty,
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
