"""Evidence fusion: BM25 and vector scores made comparable across queries, then added.

The ``evidence`` fusion profile (the ``default`` search profile's) weighs what each retriever found
as evidence, not as a rank in its own list:

BM25 evidence ``b``
    the entry's BM25 score divided by the query's *IDF mass*, ``Σ idf(t)`` over the query's
    distinct terms (a term the scope never saw counts with the largest IDF, ``df = 0``):
    the score an average-length entry holding every query term once would get. An entry matching
    only a common word of the query explains a small share of it (``"What music does she like?"``
    against ``"I like cilantro"``: ``like`` is a small part of the mass, ``music`` the large part),
    however it ranks among BM25's hits. About 1 for a full match, 0 when nothing matches.
vector evidence ``v``
    the entry's cosine measured against the scope's background for this query:
    ``(cos - mean) / std`` over every vector of the scope (the cosines are computed for all of them
    anyway), divided by ``vector_scale`` (3): a cosine three standard deviations above what the
    scope's entries score on average counts as much as a full BM25 match. A cosine below the
    background mean gives a negative ``v``, so the tail of the list stays ordered by cosine.
fused score
    ``bm25_weight · b + vector_weight · v`` (a retriever that did not return the entry adds 0).
    There is no similarity floor: every entry the vector retriever returned is a candidate, so a
    search with vectors answers ``min(limit, entries)`` hits unless the caller sets ``min_score``.

The score means the same thing from one query to the next (a share of the query explained, plus
standard deviations over the background), so ``min_score`` and the relevance gates of the context
builder and agent tools can be fixed numbers. The weights were chosen on the tune parts of
``bench/recall_suite.py`` (two paraphrase personas, LoCoMo half A); the figures are in
``docs/recall.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NotRequired, TypedDict, Unpack

__all__ = [
    "GATED_SCOPE",
    "NO_BACKGROUND",
    "RELEVANCE_GATE",
    "Background",
    "Terms",
    "evidence_rows",
    "evidence_terms",
    "relevance_gate",
]

RELEVANCE_GATE: Final = 0.1
"""The fused score below which the context builder and the agent tools leave a memory out of an
agent's prompt (a search itself has no floor). Chosen on the tune parts of ``bench/recall_suite.py``
as the highest gate keeping at least 90 % of the questions whose evidence the top 8 held (the
share of injected memories that are evidence, before and after, is in docs/recall.md)."""


GATED_SCOPE: Final = 20
"""The fewest entries a scope holds before :data:`RELEVANCE_GATE` applies. A vector's evidence is its
cosine's z-score against the scope's own cosines, and among n cosines none stands more than
sqrt(n - 1) deviations above their mean: in a scope of 5 even a perfect paraphrase ("caffeine" for
"I drink green tea every morning") fuses to about 0.09, under the gate, and up to about 20 entries a
strong one sits near it. The gate was tuned on scopes of hundreds of entries; a smaller scope keeps
only what has positive evidence (a BM25 match or a cosine above the shift), a floor of 0."""


def relevance_gate(
    has_vectors: bool, min_score: float | None = None, entries: int | None = None
) -> float | None:
    """The ``min_score`` an agent-facing recall uses: the caller's, else :data:`RELEVANCE_GATE` for a
    scope searched with vectors (fused scores), or 0 when ``entries`` (the scope's size, when the
    caller knows it) is under :data:`GATED_SCOPE`; a BM25-only search keeps its own rule (no zero
    scores) and no gate."""
    if min_score is not None:
        return min_score
    if not has_vectors:
        return None
    return 0.0 if entries is not None and entries < GATED_SCOPE else RELEVANCE_GATE


@dataclass(frozen=True, slots=True)
class Background:
    """The cosines of a query against every vector of a scope: their mean and standard deviation."""

    mean: float
    std: float


NO_BACKGROUND: Final = Background(0.0, 1.0)
"""Used when the caller measured none: ``v`` is then the cosine over ``vector_scale``."""

TAIL_SLOPE: Final = 0.01
"""Below ``vector_shift`` a cosine is no evidence; this small slope only keeps the tail in cosine order."""

Row = tuple[str, float, float | None, float | None, tuple[str, ...]]
"""One fused result as a plain tuple: the fields of :class:`~memstack.search.fusion.Hit` in order."""

SOURCES: dict[tuple[bool, bool], tuple[str, ...]] = {
    (True, True): ("bm25", "vector"),
    (True, False): ("bm25",),
    (False, True): ("vector",),
    (False, False): (),
}


@dataclass(frozen=True, slots=True)
class Terms:
    """How one search turns raw scores into the two terms of a fused score."""

    bm25_weight: float
    vector_weight: float
    vector_scale: float
    vector_shift: float
    mass: float
    background: Background

    def parts(self, bm25: float | None, cosine: float | None) -> tuple[float, float]:
        """``(bm25_weight · b, vector_weight · v)`` for a raw BM25 score and a raw cosine (None: the
        retriever did not find the entry, its term is 0); the fused score is their sum."""
        b = 0.0 if bm25 is None else self.bm25_weight * bm25 / self.mass
        if cosine is None:
            return b, 0.0
        bg = self.background
        spread = bg.std * self.vector_scale if bg.std > 0 else self.vector_scale
        z = (cosine - bg.mean) / spread - self.vector_shift / self.vector_scale
        return b, self.vector_weight * (z if z > 0 else TAIL_SLOPE * z)


class TermOptions(TypedDict):
    """The keywords of :func:`evidence_terms` and :func:`evidence_rows`."""

    bm25_weight: float
    vector_weight: float
    vector_scale: float
    vector_shift: NotRequired[float]
    mass: float | None
    background: Background | None


def evidence_terms(bm25: Sequence[tuple[str, float]], **options: Unpack[TermOptions]) -> Terms:
    """The :class:`Terms` of one search (``mass`` None or 0: BM25 scores over their maximum)."""
    mass = options["mass"]
    if not mass or mass <= 0:
        mass = max((s for _, s in bm25), default=0.0) or 1.0
    return Terms(
        options["bm25_weight"],
        options["vector_weight"],
        options["vector_scale"],
        options.get("vector_shift", 0.0),
        mass,
        options["background"] or NO_BACKGROUND,
    )


def evidence_rows(
    bm25: Sequence[tuple[str, float]], vector: Sequence[tuple[str, float]], **options: Unpack[TermOptions]
) -> list[Row]:
    """Fused rows (id, score, raw BM25, raw cosine, sources), best first; ties keep first appearance
    (BM25 list first). ``mass``: the query's IDF mass (None or 0: BM25 scores over their maximum)."""
    return terms_rows(bm25, vector, evidence_terms(bm25, **options))


def terms_rows(
    bm25: Sequence[tuple[str, float]], vector: Sequence[tuple[str, float]], terms: Terms
) -> list[Row]:
    """:func:`evidence_rows` for the :class:`Terms` already worked out."""
    raw_b: dict[str, float] = {}
    for doc_id, score in bm25:
        raw_b.setdefault(doc_id, score)
    raw_v: dict[str, float] = {}
    for doc_id, score in vector:
        raw_v.setdefault(doc_id, score)
    rows: list[Row] = []
    for doc_id in dict.fromkeys([*raw_b, *raw_v]):
        b, v = raw_b.get(doc_id), raw_v.get(doc_id)
        bm25_part, vector_part = terms.parts(b, v)
        score = bm25_part + vector_part
        rows.append((doc_id, score, b, v, SOURCES[b is not None, v is not None]))
    rows.sort(key=lambda row: -row[1])
    return rows
