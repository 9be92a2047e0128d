"""Embedders: the :class:`Embedder` protocol and its backends.

``FakeEmbedder``
    deterministic hashed bag of terms, for tests (no model, no network).
``OpenAIEmbedder``
    any OpenAI-compatible ``/v1/embeddings`` endpoint the caller configures.
``LocalEmbedder``
    a small int8 ONNX sentence model from installed packages (the ``embeddings`` extra);
    :func:`available_local_embedder` returns one, or ``None`` when the extra is not installed.
"""

from __future__ import annotations

from memstack.search.embedders.base import Embedder, l2_normalise
from memstack.search.embedders.fake import FakeEmbedder
from memstack.search.embedders.local import LOCAL_MODELS, LocalEmbedder, LocalModel, available_local_embedder
from memstack.search.embedders.openai import OpenAIEmbedder

__all__ = [
    "LOCAL_MODELS",
    "Embedder",
    "FakeEmbedder",
    "LocalEmbedder",
    "LocalModel",
    "OpenAIEmbedder",
    "available_local_embedder",
    "l2_normalise",
]
