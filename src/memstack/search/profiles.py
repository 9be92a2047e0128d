"""BM25 scoring profiles as data.

``default``
    Lucene-style BM25: k1 = 1.2, b = 0.75, ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``,
    ``tf = f·(k1 + 1) / (f + k1·(1 - b + b·len/avgdl))``, statistics (N, avgdl, df) over the whole index,
    distinct query terms, the ``default`` tokeniser.
``rockbot``
    The seed's ``Bm25Ranker`` exactly: k1 = 1.5, b = 0.75, the same idf and tf shapes, the ``rockbot``
    tokeniser, plus a phrase bonus ``2·idf·tf`` for every distinct consecutive query-token pair, whose df
    and frequency are case-insensitive, non-overlapping substring counts in the raw text; N, avgdl and df
    are computed over the candidate set of each search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memstack.foundation.errors import InvalidConfiguration
from memstack.search._lookup import lookup

__all__ = ["PROFILES", "Bm25Profile", "get_profile"]


@dataclass(frozen=True, slots=True)
class Bm25Profile:
    """Parameters of one BM25 variant.

    ``stats`` says over which documents N, avgdl and df are computed when a search is restricted to
    candidates: ``"index"`` (all documents) or ``"candidates"`` (only the candidates, as the seed does).
    ``phrase_weight`` > 0 enables the seed's substring phrase bonus.
    """

    name: str
    tokenizer: str
    k1: float
    b: float
    phrase_weight: float = 0.0
    stats: Literal["index", "candidates"] = "index"

    def __post_init__(self) -> None:
        if not self.k1 >= 0:
            raise InvalidConfiguration(f"Bm25Profile {self.name!r}: k1={self.k1!r} must be >= 0")
        if not 0.0 <= self.b <= 1.0:
            raise InvalidConfiguration(f"Bm25Profile {self.name!r}: b={self.b!r} must be within [0, 1]")
        if not self.phrase_weight >= 0:
            raise InvalidConfiguration(
                f"Bm25Profile {self.name!r}: phrase_weight={self.phrase_weight!r} must be >= 0"
            )
        if self.stats not in ("index", "candidates"):
            raise InvalidConfiguration(
                f"Bm25Profile {self.name!r}: stats={self.stats!r} must be 'index' or 'candidates'"
            )


PROFILES: dict[str, Bm25Profile] = {
    "default": Bm25Profile(name="default", tokenizer="default", k1=1.2, b=0.75),
    "rockbot": Bm25Profile(
        name="rockbot", tokenizer="rockbot", k1=1.5, b=0.75, phrase_weight=2.0, stats="candidates"
    ),
}


def get_profile(profile: str | Bm25Profile) -> Bm25Profile:
    """Resolve a profile name (or pass a :class:`Bm25Profile` through).

    Raises:
        InvalidConfiguration: unknown profile name.
    """
    return lookup(PROFILES, profile, Bm25Profile, "BM25")
