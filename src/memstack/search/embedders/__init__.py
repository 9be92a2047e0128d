"""Embedders: the :class:`Embedder` protocol and its backends.

``FakeEmbedder``
    deterministic hashed bag of terms, for tests (no model, no network).
"""

from __future__ import annotations

from memstack.search.embedders.base import Embedder, l2_normalise
from memstack.search.embedders.fake import FakeEmbedder

__all__ = ["Embedder", "FakeEmbedder", "l2_normalise"]
