"""LangGraph's ``index`` configuration for the memstack store: texts to embed, embedding, vectors.

``embed`` may be a LangChain ``Embeddings``, a sync (or async) function ``list[str] ->
list[list[float]]`` or a provider string (all three through LangGraph's own
``ensure_embeddings``), or a memstack :class:`~memstack.search.embedders.Embedder`. Texts are
taken as LangGraph's stores take them (``get_text_at_path`` per field path; ``"$"`` is the whole
value as JSON; ``text_fields``, the key LangGraph's SQLite store reads, is taken as ``fields``).
An item's vectors are stored as one hash field in the index kit's form (:mod:`memstack.index.codec`:
``{"d": dims, "v": base64 rows}``); rows are unit-length, so a dot product is the cosine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig
from langgraph.store.base.embed import EmbeddingsLambda, ensure_embeddings, get_text_at_path, tokenize_path

from ...foundation.errors import InvalidConfiguration, InvalidValue
from ...index.codec import Matrix
from ...search.embedders import Embedder, embed_queries, l2_normalise

__all__ = ["Embedding", "Matrix"]


class Embedding:
    """What an ``index`` configuration does: which texts of a value to embed, and embedding them.

    Raises:
        InvalidConfiguration: no ``embed``, ``dims`` not a positive int, ``fields`` not a list
            of path strings, a ``distance_type`` other than ``cosine``, or a provider string
            LangChain cannot load.
    """

    def __init__(self, config: IndexConfig) -> None:
        embed = config.get("embed")
        if embed is None:
            raise InvalidConfiguration(
                "index: 'embed' is required (Embeddings, function, string or Embedder)"
            )
        self.embedder: Embedder | None = embed if isinstance(embed, Embedder) else None
        self.embeddings: Embeddings | None = None
        if self.embedder is None:
            try:
                self.embeddings = ensure_embeddings(embed)
            except ValueError as exc:
                raise InvalidConfiguration(f"index: embed={embed!r}: {exc}") from None
        dims = config.get("dims", self.embedder.dim if self.embedder is not None else None)
        if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
            raise InvalidConfiguration(f"index: dims={dims!r} must be a positive int")
        self.dims: int | None = dims
        distance = config.get("distance_type", "cosine")
        if distance != "cosine":
            raise InvalidConfiguration(f"index: distance_type={distance!r}: only 'cosine' is supported")
        fields = config.get("fields") or _text_fields(config) or ["$"]
        if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
            raise InvalidConfiguration(f"index: fields={fields!r} must be a list of path strings")
        self.fields: list[tuple[str, str | list[str]]] = [_tokenized(f) for f in fields]

    # -- texts -------------------------------------------------------------------------------
    def texts(self, value: Mapping[str, Any], index: Literal[False] | list[str] | None) -> list[str]:
        """The texts of ``value`` to embed under a put's ``index`` argument (LangGraph's rule:
        None = the configured fields, False = none, a list = those paths)."""
        if index is False:
            return []
        paths = self.fields if index is None else [_tokenized(p) for p in index]
        return [text for _, tokens in paths for text in get_text_at_path(value, tokens)]

    # -- embedding ---------------------------------------------------------------------------
    def documents(self, texts: Sequence[str]) -> Matrix:
        """Unit rows, one per text.

        Raises:
            InvalidValue: the embedder answered with the wrong number or size of vectors.
            Exception: whatever the embedder raises.
        """
        if not texts:
            return np.zeros((0, self.dims or 0), dtype=np.float32)
        if self.embedder is not None:
            raw: Any = self.embedder.embed(list(texts))
        else:
            assert self.embeddings is not None
            raw = _sync_documents(self.embeddings, list(texts))
        return self._checked(raw, len(texts))

    def query(self, text: str) -> Matrix:
        """The unit vector of a search query.

        Raises:
            InvalidValue, Exception: as :meth:`documents`.
        """
        if self.embedder is not None:
            raw: Any = embed_queries(self.embedder, [text])
        else:
            assert self.embeddings is not None
            embeddings = self.embeddings
            if _async_only(embeddings):
                raw = [asyncio.run(embeddings.aembed_query(text))]
            else:
                raw = [embeddings.embed_query(text)]
        vector: Matrix = self._checked(raw, 1)[0]
        return vector

    def _checked(self, raw: Any, count: int) -> Matrix:
        matrix = np.asarray(raw, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != count:
            raise InvalidValue(f"index: the embedder returned shape {matrix.shape} for {count} text(s)")
        if self.dims is None:
            self.dims = int(matrix.shape[1])  # no dims configured: the first answer fixes them
        if matrix.shape[1] != self.dims:
            raise InvalidValue(
                f"index: the embedder returned {matrix.shape[1]} dims, the config says {self.dims}"
            )
        return l2_normalise(matrix)


def _tokenized(path: str) -> tuple[str, str | list[str]]:
    return (path, "$") if path == "$" else (path, tokenize_path(path))


def _async_only(embeddings: Embeddings) -> bool:
    """An ``EmbeddingsLambda`` around an async function has no sync path of its own."""
    return isinstance(embeddings, EmbeddingsLambda) and getattr(embeddings, "func", None) is None


def _sync_documents(embeddings: Embeddings, texts: list[str]) -> Any:
    if _async_only(embeddings):
        # Called from batch() (no loop in this thread) or abatch()'s worker thread.
        return asyncio.run(embeddings.aembed_documents(texts))
    return embeddings.embed_documents(texts)


def _text_fields(config: IndexConfig) -> list[str] | None:
    """LangGraph's SQLite store's name for ``fields`` (a string there is one path)."""
    fields = cast(dict[str, Any], config).get("text_fields")
    return [fields] if isinstance(fields, str) else fields
