"""The document-store methods of a shared memory (RobotLab's newest ``Memory``): a mixin of
:class:`~memstack.tiers.shared.store.SharedMemory`, kept apart so that each file holds one concept.

The documents are a :class:`~memstack.tiers.shared.documents.DocumentStore` under the memory's name,
searched by embeddings when the memory was given an ``embedder``, by BM25 otherwise.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Self, Unpack

from ...engines import Engine

if TYPE_CHECKING:
    from ...search.embedders import Embedder
    from .documents import DocumentSearch, DocumentStore

__all__ = ["DocumentMethods"]


class DocumentMethods:
    """``store_document``, ``search_documents``, ``document_keys``, ``delete_document``."""

    engine: Engine
    name: str
    _embedder: Embedder | None
    _lock: threading.Lock
    _documents: DocumentStore | None = None

    @property
    def documents(self) -> DocumentStore:
        """The document store of this memory (built on first use)."""
        with self._lock:
            if self._documents is None:
                from .documents import DocumentStore

                self._documents = DocumentStore(self.engine, self.name, embedder=self._embedder)
            return self._documents

    def store_document(
        self, key: str, content: str, metadata: dict[str, Any] | None = None, *, subject: str | None = None
    ) -> Self:
        """Store ``content`` under ``key`` for :meth:`search_documents` (replacing it); returns self.
        ``subject``: the end user this version is about (:mod:`memstack.foundation.keyspace.subjects`).

        Raises:
            InvalidKey: a bad key. InvalidValue: content not a str, metadata not a JSON object,
                a bad subject. EmbeddingError: the embedder failed.
        """
        self.documents.store(key, content, metadata, subject=subject)
        return self

    def search_documents(
        self, query: str, limit: int = 5, **options: Unpack[DocumentSearch]
    ) -> list[dict[str, Any]]:
        """:meth:`DocumentStore.search <memstack.tiers.shared.documents.DocumentStore.search>`: the
        ``limit`` documents closest to ``query`` after the first ``offset``, passing ``filter``
        (``options``).

        Raises:
            InvalidInput, InvalidFilter, EmbeddingError: as that method.
        """
        return self.documents.search(query, limit, **options)

    def document_keys(self) -> list[str]:
        """Keys of the stored documents, sorted."""
        return self.documents.keys()

    def delete_document(self, key: str) -> bool:
        """Delete the document under ``key``; True if there was one.

        Raises:
            InvalidKey: a bad key.
        """
        return self.documents.delete(key)
