"""A deterministic embedder for tests: no model, no network.

A text becomes a signed, hashed bag of features: its ``default``-tokeniser terms (case-folded, stop words
dropped, stemmed) with weight 1, and the character trigrams of each term with a smaller weight, so texts
that share words (or word stems, or most of a word's spelling) point in similar directions. Identical
texts, and texts that differ only in case, punctuation, stop words or inflection, give identical vectors.
Hashing uses BLAKE2b, so vectors are the same in every process and on every platform.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from memstack.foundation.errors import InvalidConfiguration, InvalidInput
from memstack.search.embedders.base import l2_normalise
from memstack.search.tokenize import get_tokenizer

__all__ = ["FakeEmbedder"]

_TRIGRAM_WEIGHT = 0.35


@lru_cache(maxsize=65536)
def _bucket(feature: str) -> int:
    """A stable 64-bit hash of a feature: the low bit is the sign, the rest the bucket."""
    return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")


class FakeEmbedder:
    """Deterministic hashed bag-of-terms embeddings of size ``dim`` (see the module docstring).

    Raises:
        InvalidConfiguration: ``dim`` is not a positive int.
    """

    def __init__(self, dim: int = 64) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise InvalidConfiguration(f"FakeEmbedder dim={dim!r} must be an int >= 1")
        self._dim = dim
        self._tokenize = get_tokenizer("default")

    @property
    def model_id(self) -> str:
        """``"fake:{dim}"``."""
        return f"fake:{self._dim}"

    @property
    def dim(self) -> int:
        """The vector size."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` into a ``(len(texts), dim)`` float32 array of unit rows (zero for no terms).

        Raises:
            InvalidInput: ``texts`` is a bare string or holds a non-string.
        """
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of texts, not a single str")
        out = np.zeros((len(texts), self._dim), dtype=np.float64)
        for row, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInput(f"texts[{row}]={text!r} must be a str")
            for term in self._tokenize(text):
                self._put(out[row], "w:" + term, 1.0)
                padded = f"<{term}>"
                for i in range(len(padded) - 2):
                    self._put(out[row], "c:" + padded[i : i + 3], _TRIGRAM_WEIGHT)
        return l2_normalise(out)

    def _put(self, row: npt.NDArray[np.float64], feature: str, weight: float) -> None:
        h = _bucket(feature)
        row[(h >> 1) % self._dim] += -weight if h & 1 else weight
