"""``DocumentStore``: texts stored under keys and searched by meaning (RobotLab's newest
``store_document`` / ``search_documents`` / ``document_keys`` / ``delete_document``, spec 4 item 34).

Documents live on the engine, one per key, visible to every process using the same shared
memory name (``T`` = ``engine.tag(name)``)::

    shared:d:T:doc:{key}          string  {"key", "text", "metadata", "created", "updated"
                                           (+ "vector", "model", "dim" when embedded,
                                           + "subject": the version's label)}
    shared:d:T:ver/log/epoch/ids  the change log of :mod:`memstack.index.changelog` (ids = keys)

(families ``documents.*`` of the keyspace registry).

Search: with an embedder, by cosine similarity of embeddings (RobotLab's way; ``score`` in
[-1, 1], every document ranked); without one, by BM25 (``score`` >= 0, documents sharing no term
with the query are left out), where RobotLab would raise its ``DependencyError``. Either way each
process keeps an in-process index (the index kit's :class:`~memstack.index.mirror.Mirror`) kept
fresh by the change log. A document stored without a vector of the embedder's model (or before an
embedder was set) is embedded when indexed. ``filter`` takes the filter language of
:mod:`memstack.search.filters` on the built-in fields ``key``, ``text``, ``created`` and ``updated``
and on the document's ``metadata``; ``offset`` pages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypedDict

from ...engines import Engine
from ...foundation.errors import InvalidInput, InvalidValue
from ...foundation.keyspace import check_subject, family_named, label_of, labelled, register
from ...foundation.keyspace.families import DOCUMENTS
from ...foundation.limits import MAX_SEARCH_OFFSET, check_text, short_repr
from ...index import SetKeys, registry
from ...index.codec import pack, unit_rows, unpack
from ...index.mirror import Mirror, Row
from ...index.vectors import VectorIndex
from ...search import Bm25Index
from ...search.embedders import Embedder
from ...search.filter_eval import matches
from ...search.filters import FieldSet, Filter, parse_filter
from .serialize import check_key, check_name, check_value, dumps

__all__ = ["DOCUMENT_FIELDS", "DocumentSearch", "DocumentStore"]

_DOC: Final = family_named("documents.doc").tail_prefix

DOCUMENT_FIELDS: Final = FieldSet(
    "documents", {"key": "text", "text": "text", "created": "time", "updated": "time"}, "metadata", True
)
"""The filter language's fields of a document (its user data: ``metadata``); ``created`` and
``updated`` compare as times (a document shows them as epoch milliseconds)."""


class DocumentSearch(TypedDict, total=False):
    """The keyword options of :meth:`DocumentStore.search` (what
    :meth:`~memstack.tiers.shared.SharedMemory.search_documents` passes on)."""

    filter: Mapping[str, Any] | None
    offset: int


class _Doc:
    __slots__ = ("created", "key", "metadata", "text", "updated")

    def __init__(self, doc: dict[str, Any]) -> None:
        self.key, self.text = str(doc["key"]), str(doc["text"])
        self.metadata: dict[str, Any] = doc.get("metadata") or {}
        self.created, self.updated = float(doc["created"]) / 1000, float(doc["updated"]) / 1000

    def field(self, name: str) -> Any:
        return getattr(self, name)


class _DocMirror(Mirror):
    """Texts and metadata of one store's documents, with a BM25 or a vector index."""

    def __init__(self, embedder: Embedder | None) -> None:
        super().__init__()
        self.embedder = embedder
        self.docs: dict[str, _Doc] = {}
        self.bm25 = Bm25Index()
        self.vectors = VectorIndex(embedder.dim if embedder else 1)
        self.passing: dict[str, set[str]] = {}  # filter key -> keys passing it, until the next change

    def reset(self) -> None:
        self.docs = {}
        self.bm25.clear()
        self.vectors.clear()

    def take(self, rows: Sequence[Row]) -> None:
        self.passing = {}
        for key, raw, _ in rows:
            if raw is None:
                self.docs.pop(key, None)
                self.bm25.remove(key)
                self.vectors.remove(key)
                continue
            doc = json.loads(raw)
            self.docs[key] = _Doc(doc)
            if self.embedder is None:
                self.bm25.add(key, doc["text"])
                continue
            model, dim = self.embedder.model_id, self.embedder.dim
            stored = (
                unpack(doc["vector"], dim) if doc.get("model") == model and doc.get("dim") == dim else None
            )
            self.vectors.add(key, stored if stored is not None else self.embedder.embed([doc["text"]])[0])
        self.size = len(self.docs)

    def vector_bytes(self) -> int:
        return self.vectors.nbytes

    def allowed(self, flt: Filter | None) -> set[str] | None:
        if flt is None:
            return None
        found = self.passing.get(flt.key)
        if found is None:
            found = self.passing[flt.key] = {
                k for k, d in self.docs.items() if matches(flt, d.metadata, d.field)
            }
        return found


class DocumentStore:
    """The documents of shared memory ``name`` on ``engine`` (see the module docstring).

    Args:
        engine: where documents live.
        name: the shared memory's name.
        embedder: embeds documents and queries; None: BM25 search.

    Raises:
        InvalidKey: a bad name.
    """

    def __init__(self, engine: Engine, name: str, *, embedder: Embedder | None = None) -> None:
        self.engine = engine
        self.name = check_name(name)
        self.embedder = embedder
        base = DOCUMENTS.render(engine.tag, board=name)
        self._log = SetKeys(base, _DOC)
        self._doc = base + _DOC
        self.doc_prefix = self._doc
        """What the key of every document of the store starts with."""

    @property
    def mode(self) -> str:
        """``"embedding"`` or ``"bm25"``: how :meth:`search` ranks."""
        return "bm25" if self.embedder is None else "embedding"

    def _mirror(self) -> _DocMirror:
        model = "bm25" if self.embedder is None else f"{self.embedder.model_id}/{self.embedder.dim}"
        key = ("documents", self.engine.identity, self._log.base, model)
        return registry.mirror(key, lambda: _DocMirror(self.embedder), _DocMirror)

    def store(
        self, key: str, content: str, metadata: dict[str, Any] | None = None, *, subject: str | None = None
    ) -> None:
        """Store ``content`` under ``key``, replacing what ``key`` held (its creation time stays);
        ``subject``: the end user this version is about (:mod:`memstack.foundation.keyspace.subjects`).

        Raises:
            InvalidKey: a bad key. InvalidValue: content not a str (or with lone surrogates),
                metadata not a JSON object, a bad subject. EmbeddingError: the embedder failed.
        """
        key = check_key(key)
        if subject is not None:
            check_subject(subject)
        check_text(content, "content")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidValue(f"metadata {short_repr(metadata)}: must be a JSON object (dict) or None")
        check_value(metadata or {}, "metadata")
        now = self.engine.now_ms()
        old = self.engine.get(self._doc + key)
        doc: dict[str, Any] = {
            "key": key,
            "text": content,
            "metadata": metadata or {},
            "created": json.loads(old)["created"] if old is not None else now,
            "updated": now,
        }
        if self.embedder is not None:
            doc["vector"] = pack(unit_rows(self.embedder.embed([content])[0])[0])
            doc["model"], doc["dim"] = self.embedder.model_id, self.embedder.dim
        with self.engine.batch() as batch:
            register(self.engine, batch, subject, "document", self.name, key)
            batch.set(self._doc + key, dumps(labelled(doc, subject)))
            self._log.record(batch, "put", [key])

    def get(self, key: str) -> dict[str, Any] | None:
        """``{key, text, metadata, created, updated}`` (ms) of one document, or None.

        Raises:
            InvalidKey: a bad key.
        """
        raw = self.engine.get(self._doc + check_key(key))
        if raw is None:
            return None
        doc = json.loads(raw)
        return {k: doc[k] for k in ("key", "text", "metadata", "created", "updated")}

    def search(
        self,
        query: str,
        limit: int = 5,
        *,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - the filter language's public name
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """The best ``limit`` documents after the first ``offset``: ``[{key, text, score, metadata}]``,
        best first; ``filter`` (see :mod:`memstack.search.filters`) keeps only the documents passing it.

        Raises:
            InvalidInput: ``query`` not a str, ``limit`` not an int >= 1, ``offset`` not an int
                from 0 to 10,000 (:data:`~memstack.foundation.limits.MAX_SEARCH_OFFSET`).
            InvalidFilter: a filter breaking the filter language.
            EmbeddingError: the embedder failed.
        """
        if not isinstance(query, str):
            raise InvalidInput(f"query {short_repr(query)}: must be a str")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput(f"limit {short_repr(limit)}: must be an int >= 1")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_SEARCH_OFFSET:
            raise InvalidInput(f"offset {short_repr(offset)}: must be an int from 0 to {MAX_SEARCH_OFFSET}")
        flt = parse_filter(filter, DOCUMENT_FIELDS)
        vector = None if self.embedder is None else self.embedder.embed([query])[0]
        end = offset + limit
        mirror = self._mirror()
        with mirror.lock:
            mirror.refresh(self.engine, self._log)
            allowed = mirror.allowed(flt)
            if vector is None:
                ranked = mirror.bm25.search(query, k=end, candidates=allowed)
            else:
                ranked = mirror.vectors.top(vector, None if allowed is not None else end)
                if allowed is not None:
                    ranked = [hit for hit in ranked if hit[0] in allowed][:end]
            return [
                {
                    "key": key,
                    "text": mirror.docs[key].text,
                    "score": score,
                    "metadata": mirror.docs[key].metadata,
                }
                for key, score in ranked[offset:end]
            ]

    def keys(self) -> list[str]:
        """Keys of the stored documents, sorted."""
        return sorted(self.engine.smembers(self._log.ids))

    def delete(self, key: str) -> bool:
        """Delete the document under ``key``; True if there was one.

        Raises:
            InvalidKey: a bad key.
        """
        key = check_key(key)
        with self.engine.batch() as batch:
            batch.delete(self._doc + key)
            self._log.record(batch, "del", [key])
        assert batch.result is not None
        return bool(batch.result[0])

    def delete_owned(self, key: str, subject: str) -> bool:
        """Delete the document under ``key`` if its current version is labelled ``subject`` (a
        version someone else stored over it stays); True if it went. Guarded by the text read,
        so a concurrent store is never deleted on the strength of a label it does not carry."""
        while True:
            raw = self.engine.get(self._doc + key)
            if raw is None or label_of(json.loads(raw)) != subject:
                return False
            batch = self.engine.batch()
            batch.require_equal(self._doc + key, raw)
            batch.delete(self._doc + key)
            self._log.record(batch, "del", [key])
            if batch.execute().applied:
                return True

    def clear(self) -> int:
        """Delete every document; returns how many there were."""
        keys = self.keys()
        for start in range(0, len(keys), 1000):
            self.engine.delete(*[self._doc + k for k in keys[start : start + 1000]])
        with self.engine.batch() as batch:
            self._log.restart(batch)
        return len(keys)

    def __len__(self) -> int:
        return self.engine.scard(self._log.ids)

    def __repr__(self) -> str:
        return f"<DocumentStore {self.name!r} {self.mode}>"
