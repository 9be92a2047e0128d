"""Search: tokenisers, the incremental BM25 index, score fusion, search profiles, feedback, rerank and
embedders. Pure logic, no storage (the rerank client talks only to the server its caller configures).

>>> from memstack.search import Bm25Index
>>> idx = Bm25Index()
>>> idx.add("a", "I love jazz concerts")
>>> [doc for doc, _ in idx.search("concert")]
['a']
"""

from __future__ import annotations

from memstack.search.bm25 import Bm25Index
from memstack.search.fusion import FUSION_PROFILES, FusionProfile, Hit, cosine, fuse
from memstack.search.profiles import PROFILES, Bm25Profile
from memstack.search.rerank import HttpReranker, Reranker
from memstack.search.retrieval import SEARCH_PROFILES, SearchProfile
from memstack.search.tokenize import TOKENIZERS, TokenizerProfile, tokenize

__all__ = [
    "FUSION_PROFILES",
    "PROFILES",
    "SEARCH_PROFILES",
    "TOKENIZERS",
    "Bm25Index",
    "Bm25Profile",
    "FusionProfile",
    "Hit",
    "HttpReranker",
    "Reranker",
    "SearchProfile",
    "TokenizerProfile",
    "cosine",
    "fuse",
    "tokenize",
]
