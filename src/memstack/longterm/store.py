"""``LongTermMemory``: the long-term entries of one scope, searched by BM25 (+ vectors).

This module writes (every write is one guarded batch with its change-log entry); the reads and
searches are :mod:`.reads`. Each stored version may carry the subject label of the end user it
is about (:mod:`memstack.keyspace.subjects`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from ..engines import Engine
from ..errors import Conflict, InvalidConfiguration, InvalidValue
from ..keyspace import check_subject, label_of, register
from ..limits import short_repr
from ..redact import redact_url
from ..search import FUSION_PROFILES
from ..search.retrieval import SEARCH_PROFILES
from .entry import MemoryEntry, from_json, to_json
from .layout import ScopeKeys, log_change
from .query import document_text
from .reads import LongTermReads
from .similar import DedupeMode, check_mode, find_duplicate
from .snapshotter import snapshotter, take
from .validate import (
    check_category,
    check_content,
    check_metadata,
    check_scope,
    check_tags,
    check_time,
    new_id,
    normalise_id,
)
from .vectors import EmbeddingWorker

if TYPE_CHECKING:
    from ..search.embedders import Embedder
    from ..search.rerank import Reranker

__all__ = ["LongTermMemory"]

log = logging.getLogger("memstack.longterm")

SAVE_ATTEMPTS: Final = 16
"""Optimistic retries of one save racing other writers of the same id."""
DELETE_CHUNK: Final = 500
"""Entries :meth:`LongTermMemory.delete_many` removes per engine batch."""


class LongTermMemory(LongTermReads):
    """Long-term memories of one scope (a user, an agent) on one engine.

    Args:
        engine: the storage engine.
        scope: whose memories; ``[A-Za-z0-9_.@-]{1,128}``. Scopes never see each other's entries.
        profile: search profile, a name of :data:`memstack.search.SEARCH_PROFILES`: ``"default"``,
            ``"plain"`` (Lucene BM25 with stemming, no option: the previous default), ``"rockbot"``
            (the seed), ``"conversation"``, ``"rm3"``, ``"rocchio"``.
        embedder: optional; vectors are then computed in the background and searches are hybrid.
        fusion: fusion profile for hybrid search (None: the search profile's), a name of
            :data:`memstack.search.FUSION_PROFILES`.
        min_similarity: cosine threshold for vector hits (None: the fusion profile's own).
        reranker: optional rerank stage (e.g. :class:`memstack.search.rerank.HttpReranker`); off by default.

    Raises:
        InvalidKey: a bad scope.
        InvalidConfiguration: an unknown profile or fusion, a ``min_similarity`` outside [-1, 1].
    """

    def __init__(
        self,
        engine: Engine,
        scope: str = "default",
        *,
        profile: str = "default",
        embedder: Embedder | None = None,
        fusion: str | None = None,
        min_similarity: float | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        if not isinstance(profile, str) or profile not in SEARCH_PROFILES:
            raise InvalidConfiguration(
                f"profile {short_repr(profile)}: must be one of {', '.join(sorted(SEARCH_PROFILES))}"
            )
        fusion = SEARCH_PROFILES[profile].fusion if fusion is None else fusion
        if not isinstance(fusion, str) or fusion not in FUSION_PROFILES:
            raise InvalidConfiguration(
                f"fusion {short_repr(fusion)}: must be one of {', '.join(sorted(FUSION_PROFILES))}"
            )
        if min_similarity is not None and (
            isinstance(min_similarity, bool)
            or not isinstance(min_similarity, int | float)
            or not -1 <= min_similarity <= 1
        ):
            raise InvalidConfiguration(
                f"min_similarity {short_repr(min_similarity)}: must be a number from -1 to 1"
            )
        self.engine = engine
        self.scope = check_scope(scope)
        self.profile, self.fusion, self.min_similarity = profile, fusion, min_similarity
        self.embedder, self.reranker = embedder, reranker
        self.keys = ScopeKeys.of(engine, scope)
        self._worker = EmbeddingWorker(engine, self.keys, embedder) if embedder is not None else None

    # -- writes ------------------------------------------------------------------------------
    def save(
        self,
        entry: MemoryEntry | None = None,
        *,
        content: str | None = None,
        category: str | None = None,
        tags: Iterable[str] | str | None = None,
        metadata: dict[str, Any] | None = None,
        id: str | None = None,  # noqa: A002 - the field is called id everywhere in the seed
        created_at: datetime | float | None = None,
        dedupe: DedupeMode | None = None,
        subject: str | None = None,
    ) -> MemoryEntry:
        """Save a memory (an upsert by id) and return it as stored.

        Pass a :class:`MemoryEntry` or the fields. A new id is generated when none is given. On an
        update the creation time is kept (unless given) and ``updated_at`` becomes now; the
        vector, if any, is recomputed in the background when the searchable text changed.

        ``dedupe`` (only for a save without an id): ``"exact"`` or ``"near"`` (see
        :mod:`memstack.longterm.similar` for the rule and its thresholds). When the scope already
        holds a duplicate of ``content``, nothing new is created: the oldest duplicate gets the
        given tags merged into its own and ``updated_at`` now, and is returned (same id).

        ``subject``: the end user this version is about (see :mod:`memstack.keyspace.subjects`;
        default: the given entry's); ``Memory.forget(subject=…)`` then removes it, unless
        another version was saved over it.

        Raises:
            InvalidValue: blank content, bad tags/metadata/time, both ``entry`` and fields, an
                unknown ``dedupe`` mode, or ``dedupe`` with an id; text with a lone surrogate,
                content over 1 MiB, metadata that breaks :mod:`memstack.limits` (the message names
                ``content``, ``tags[i]``, ``metadata['x']``...).
            InvalidCategory: a category that breaks the path rule or is over 256 characters.
            InvalidKey: a bad id.
            Conflict: the id kept changing under concurrent writers.
        """
        if subject is not None:
            check_subject(subject)
        if check_mode(dedupe) is not None:
            if entry is not None or id is not None:
                raise InvalidValue(f"save(dedupe={dedupe!r}): only for a new entry (no id, no MemoryEntry)")
            existing = self._duplicate_of(check_content(content), dedupe)
            if existing is not None:
                merged: dict[str, str] = {}
                for tag in (*existing.tags, *check_tags(tags)):
                    merged.setdefault(tag.lower(), tag)
                return self.save(
                    content=existing.content,
                    category=existing.category,
                    tags=list(merged.values()),
                    metadata=existing.metadata,
                    id=existing.id,
                    created_at=existing.created_at,
                    subject=subject,
                )
        if entry is not None:
            if content is not None or id is not None:
                raise InvalidValue("save(): pass either a MemoryEntry or content=/id=, not both")
            content, category, tags, metadata = entry.content, entry.category, entry.tags, entry.metadata
            id, created_at = entry.id, entry.created_at  # noqa: A001 - see the signature
            if subject is None and entry.subject is not None:
                subject = check_subject(entry.subject)
        entry_id = new_id() if id is None else normalise_id(id)
        given_created = check_time(created_at, "created_at")
        template = MemoryEntry(
            id=entry_id,
            content=check_content(content),
            category=check_category(category),
            tags=check_tags(tags),
            metadata=check_metadata(metadata),
            subject=subject,
        )
        key = self.keys.entry(entry_id)
        for _ in range(SAVE_ATTEMPTS):
            old_raw = self.engine.get(key)
            now = datetime.fromtimestamp(self.engine.clock.now(), UTC)
            old = from_json(old_raw) if old_raw is not None else None
            if old is None:
                new = replace(template, created_at=given_created or now)
            else:
                new = replace(template, created_at=given_created or old.created_at, updated_at=now)
            if self._write(new, old_raw, old):
                return new.copy()
        raise Conflict(
            f"memory {short_repr(entry_id)}: changed concurrently {SAVE_ATTEMPTS} times; save abandoned"
        )

    def restore(self, entry: MemoryEntry) -> MemoryEntry:
        """Write ``entry`` exactly as given (times included), replacing any entry of its id.

        Used by imports, so an export round-trips exactly.

        Raises:
            InvalidValue, InvalidCategory, InvalidKey: as :meth:`save`.
            Conflict: as :meth:`save`.
        """
        new = MemoryEntry(
            id=normalise_id(entry.id),
            content=check_content(entry.content),
            category=check_category(entry.category),
            tags=check_tags(entry.tags),
            created_at=check_time(entry.created_at, "created_at") or entry.created_at,
            updated_at=check_time(entry.updated_at, "updated_at"),
            metadata=check_metadata(entry.metadata),
            subject=None if entry.subject is None else check_subject(entry.subject),
        )
        key = self.keys.entry(new.id)
        for _ in range(SAVE_ATTEMPTS):
            old_raw = self.engine.get(key)
            if self._write(new, old_raw, from_json(old_raw) if old_raw is not None else None):
                return new.copy()
        raise Conflict(
            f"memory {short_repr(new.id)}: changed concurrently {SAVE_ATTEMPTS} times; restore abandoned"
        )

    def _duplicate_of(self, content: str, mode: DedupeMode | None) -> MemoryEntry | None:
        if mode is None:
            return None
        cache = self._fresh_cache()
        with cache.lock:
            entries = [e.copy() for e in cache.entries.values()]
            index = cache.index("default") if mode == "near" else None
            return find_duplicate(entries, content, mode, index)

    def embed_later(self, entry_id: str, text: str) -> None:
        """Queue the background vector computation of an entry written outside :meth:`save`
        (the dream passes write entries in their own batches); a no-op without an embedder."""
        if self._worker is not None:
            self._worker.submit(entry_id, text)

    def _write(self, new: MemoryEntry, old_raw: str | None, old: MemoryEntry | None) -> bool:
        text = document_text(new)
        text_changed = old is None or document_text(old) != text
        batch = self.engine.batch()
        batch.require_equal(self.keys.entry(new.id), old_raw)
        register(self.engine, batch, new.subject, "long_term", self.scope, new.id)
        batch.set(self.keys.entry(new.id), to_json(new))
        batch.sadd(self.keys.ids, new.id)
        if text_changed:
            batch.hdel(self.keys.vectors, new.id)
        self._log_change(batch, "put", new.id)
        if not batch.execute().applied:
            return False
        if self._worker is not None and text_changed:
            self._worker.submit(new.id, text)
        snapshotter(self.engine, self.scope).touch()
        return True

    def _log_change(self, batch: Any, op: str, entry_id: str) -> None:
        log_change(batch, self.keys, op, entry_id)

    def delete(self, id: str) -> bool:  # noqa: A002 - the field is called id everywhere in the seed
        """Delete a memory and its vector; False when the id is unknown.

        Raises:
            InvalidKey: a malformed id.
        """
        entry_id = normalise_id(id)
        batch = self.engine.batch()
        batch.require_exists(self.keys.entry(entry_id))
        batch.delete(self.keys.entry(entry_id))
        batch.srem(self.keys.ids, entry_id)
        batch.hdel(self.keys.vectors, entry_id)
        # The snapshot may hold the entry's terms: it goes with the entry, and the counter keeps a
        # snapshot taken before this deletion from landing after it (longterm/snapshot.py).
        batch.delete(self.keys.snapshot, self.keys.snapshot_version)
        batch.incr(self.keys.deletions)
        self._log_change(batch, "del", entry_id)
        if not batch.execute().applied:
            return False
        snapshotter(self.engine, self.scope).touch()
        return True

    def delete_many(self, ids: Iterable[str]) -> int:
        """Delete several memories and their vectors in one batch per :data:`DELETE_CHUNK` ids (a
        forget of a user's entries is a few engine calls, not one per entry); returns how many
        existed. Each batch is guarded by the existence of the ids it found, so a concurrent
        delete of one of them makes it read again rather than count it twice.

        Raises:
            InvalidKey: a malformed id (nothing is deleted then).
            Conflict: the ids kept changing under concurrent writers.
        """
        wanted = sorted({normalise_id(i) for i in ids})
        removed = 0
        for start in range(0, len(wanted), DELETE_CHUNK):
            removed += len(self._delete_chunk(wanted[start : start + DELETE_CHUNK])[0])
        return removed

    def delete_owned(self, ids: Iterable[str], subject: str) -> tuple[list[str], list[str]]:
        """Delete those of ``ids`` whose current version is labelled ``subject`` (see
        :meth:`delete_many`); a version someone else saved over it stays. Returns ``(removed,
        kept)``: the ids deleted, and the ids whose stored version is not the subject's.

        Each batch is guarded by the versions read, so a save landing in between is never deleted
        on the strength of a label it does not carry (the batch reads again).

        Raises:
            InvalidKey: a malformed id (nothing is deleted then).
            Conflict: the ids kept changing under concurrent writers.
        """
        wanted = sorted({normalise_id(i) for i in ids})
        removed: list[str] = []
        kept: list[str] = []
        for start in range(0, len(wanted), DELETE_CHUNK):
            gone, stayed = self._delete_chunk(wanted[start : start + DELETE_CHUNK], subject)
            removed += gone
            kept += stayed
        return removed, kept

    def _delete_chunk(self, ids: list[str], subject: str | None = None) -> tuple[list[str], list[str]]:
        for _ in range(SAVE_ATTEMPTS):
            found = self.engine.mget([self.keys.entry(i) for i in ids])
            stored = {i: raw for i, raw in zip(ids, found, strict=True) if raw is not None}
            present = [
                i for i, raw in stored.items() if subject is None or label_of(json.loads(raw)) == subject
            ]
            others = [i for i in stored if i not in present]
            if not present:
                return [], others
            batch = self.engine.batch()
            for entry_id in present:
                batch.require_equal(self.keys.entry(entry_id), stored[entry_id])
            batch.delete(*[self.keys.entry(i) for i in present])
            batch.srem(self.keys.ids, *present)
            batch.hdel(self.keys.vectors, *present)
            batch.delete(self.keys.snapshot, self.keys.snapshot_version)  # as delete() does
            batch.incr(self.keys.deletions)
            for entry_id in present:
                self._log_change(batch, "del", entry_id)
            if batch.execute().applied:
                snapshotter(self.engine, self.scope).touch()
                return present, others
        raise Conflict(f"scope {short_repr(self.scope)}: entries kept changing; delete abandoned")

    def snapshot(self) -> bool:
        """Write the scope's BM25 snapshot now (normally written in the background after writes
        settle, for scopes of 5,000 entries or more): a new process then answers its first plain
        BM25 search from it instead of building its cache first (see :mod:`memstack.longterm.cold`).
        False when the scope is empty or a deletion happened meanwhile.

        Raises:
            EngineError: the engine failed (nothing is written).
        """
        return take(self.engine, self.scope)

    def __repr__(self) -> str:
        return f"<LongTermMemory scope={self.scope!r} on {redact_url(self.engine.url)!r}>"
