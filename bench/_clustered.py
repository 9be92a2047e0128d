"""An embedder-like corpus for bench/scale.py: clustered 384-dimensional unit vectors with texts that agree.

A sentence embedder's vectors are clustered (texts on one topic lie close together), and a topic's
texts share words. Here each run of :data:`CLUSTER` consecutive entries is one topic: its vectors are
a seeded Gaussian centre plus noise (``centre + NOISE x N(0, 1)`` per dimension, normalised: members
have cosine about 0.74 with each other and about 0 with other topics), and its texts mix a dozen
topic words with the bench's Zipf vocabulary, so BM25 and the vectors point at the same entries. A
query is a fresh noisy member of a topic already in the scope (vector) with three of its topic
words and one common word (text). Everything is a function of the entry's or query's number, so a
growing scope is filled batch by batch without holding the vectors.

:class:`ClusteredEmbedder` embeds what the bench asks it (the queries and saved texts) the same way:
a text it generated maps to its vector; any other text to a member of the topic its hash picks.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
CLUSTER = 100
NOISE = 0.6
TOPIC_WORDS = 12


class ClusteredCorpus:
    """Texts and vectors of entries ``0, 1, 2, ...`` and of queries, from ``seed``."""

    def __init__(self, dim: int, words: list[str], cum: list[float], seed: int = 37) -> None:
        self.dim, self.words, self.cum, self.seed = dim, words, cum, seed
        self._centres: dict[int, F32] = {}
        self.known: dict[str, F32] = {}  # texts the embedder is asked about -> their vector

    def centre(self, topic: int) -> F32:
        found = self._centres.get(topic)
        if found is None:
            rng = np.random.default_rng((self.seed, topic))
            found = self._centres[topic] = rng.standard_normal(self.dim).astype(np.float32)
        return found

    def topic_words(self, topic: int) -> list[str]:
        return random.Random(self.seed * 1_000_003 + topic).sample(self.words, TOPIC_WORDS)

    def _member(self, topic: int, rng: np.random.Generator) -> F32:
        vector = self.centre(topic) + NOISE * rng.standard_normal(self.dim).astype(np.float32)
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    def entries(self, start: int, count: int) -> tuple[list[str], F32]:
        """Texts and vectors (rows) of entries ``start .. start + count - 1``."""
        rng = np.random.default_rng((self.seed, 1, start))
        pick = random.Random(self.seed + start)
        texts, rows = [], np.empty((count, self.dim), dtype=np.float32)
        for n in range(count):
            topic = (start + n) // CLUSTER
            own = self.topic_words(topic)
            words = pick.choices(own, k=pick.randint(4, 12))
            words += pick.choices(self.words, k=pick.randint(4, 18), cum_weights=self.cum)
            pick.shuffle(words)
            texts.append(" ".join(words))
            rows[n] = self._member(topic, rng)
        return texts, rows

    def queries(self, count: int, filled: int, rng: random.Random) -> list[str]:
        """``count`` query texts on topics of the first ``filled`` entries (their vectors remembered)."""
        out = []
        for n in range(count):
            topic = rng.randrange(max(1, filled // CLUSTER))
            text = " ".join([*rng.sample(self.topic_words(topic), 3), rng.choice(self.words[:200])])
            self.known[text] = self._member(topic, np.random.default_rng((self.seed, 2, n, topic)))
            out.append(text)
        return out

    def embed(self, texts: Sequence[str], topics: int) -> F32:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            found = self.known.get(text)
            if found is None:
                key = zlib.crc32(text.encode())
                found = self._member(key % max(1, topics), np.random.default_rng((self.seed, 3, key)))
            out[row] = found
        return out


class ClusteredEmbedder:
    """The embedder of a :class:`ClusteredCorpus` (model ``clustered:<dim>``)."""

    def __init__(self, corpus: ClusteredCorpus) -> None:
        self.corpus = corpus
        self.topics = 1  # topics filled so far: texts it did not make go to one of these

    @property
    def model_id(self) -> str:
        return f"clustered:{self.corpus.dim}"

    @property
    def dim(self) -> int:
        return self.corpus.dim

    def embed(self, texts: Sequence[str]) -> F32:
        return self.corpus.embed(texts, self.topics)
