"""``LongTermMemory``: the long-term entries of one scope, searched by BM25 (+ vectors).

This module saves (every save is one guarded batch with its change-log line and history item);
the reads and searches are :mod:`.reads`, the deletions :mod:`.deletes`. Each stored version may
carry the subject label of the end user it is about (:mod:`memstack.foundation.keyspace.subjects`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Unpack

from ...engines import Engine
from ...foundation.errors import AlreadyExists, Conflict, InvalidConfiguration, InvalidValue
from ...foundation.keyspace import check_subject
from ...foundation.limits import short_repr
from ...foundation.redact import redact_url
from ...search import FUSION_PROFILES
from ...search.embedders.base import Embedder
from ...search.retrieval import SEARCH_PROFILES
from .bulk import BATCH_ITEMS, save_many
from .deletes import LongTermDeletes
from .entry import MemoryEntry, current_at, from_json
from .history import check_actor
from .layout import ScopeKeys
from .plan import SavePlan, guard_version, now_of, plan_of, queue_version
from .query import document_text
from .reads import LongTermReads
from .repeats import equal_current, same_version
from .requests import SaveMemory, SaveOptions
from .similar import DedupeMode, check_mode, find_duplicate
from .snapshotter import snapshotter, take
from .supersede import expiry_of, superseded_versions
from .validate import (
    check_category,
    check_content,
    check_metadata,
    check_scope,
    check_tags,
    check_time,
    normalise_id,
)
from .vectors import EmbeddingWorker

if TYPE_CHECKING:
    from ...search.rerank import Reranker

__all__ = ["LongTermMemory"]

log = logging.getLogger("memstack.tiers.longterm")

SAVE_ATTEMPTS: Final = 16
"""Optimistic retries of one save racing other writers of the same id."""


class LongTermMemory(LongTermReads, LongTermDeletes):
    """Long-term memories of one scope (a user, an agent) on one engine.

    Args:
        engine: the storage engine.
        scope: whose memories; ``[A-Za-z0-9_.@-]{1,128}``. Scopes never see each other's entries.
        profile: search profile, a name of :data:`memstack.search.SEARCH_PROFILES`: ``"default"``,
            ``"plain"`` (Lucene BM25 with stemming, no option: the previous default), ``"rockbot"``
            (RockBot), ``"conversation"``, ``"rm3"``, ``"rocchio"``.
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
        self.fusion_asked = fusion is not None  # a fusion of the caller's is used on every scope
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
        if embedder is not None and not isinstance(embedder, Embedder):
            raise InvalidConfiguration(
                f"embedder {short_repr(embedder)}: must be an Embedder or None (a setting text such as "
                "'none' or 'local' is resolved by memstack.open and Memory.long_term)"
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
        dedupe: DedupeMode | None = None,
        actor: str = "api",
        create: bool = False,
        **fields: Unpack[SaveOptions],
    ) -> MemoryEntry:
        """Save a memory (an upsert by id) and return it as stored.

        Pass a :class:`MemoryEntry` or the fields. A new id is generated when none is given. An
        update replaces content, category, tags, metadata and expiry with what is given; it keeps
        the creation time, ``valid_from`` (unless given) and the supersession fields, and sets
        ``updated_at`` to now; the vector, if any, is recomputed in the background when the
        searchable text changed. Every save adds an item to the entry's :meth:`history`.

        ``supersedes``: ids of entries this one replaces ("lives in Berlin" superseding "lives
        in Lisbon"): each gets ``valid_to`` = this entry's ``valid_from`` and ``superseded_by`` =
        its id, in the same atomic batch; they stay readable, and searches hide them unless asked
        (``include_history``, ``as_of``). ``valid_from``: when the fact became true (default: the
        creation time). ``expires_at`` (a time) or ``ttl`` (seconds from now): when the entry
        expires; searches hide it from then on and the retention sweep deletes it.

        ``dedupe`` (only for a save without an id): ``"exact"`` or ``"near"`` (see
        :mod:`memstack.tiers.longterm.similar` for the rule and its thresholds). When the scope already
        holds a duplicate of ``content``, nothing new is created: the oldest duplicate gets the
        given tags merged into its own and ``updated_at`` now, and is returned (same id).

        ``subject``: the end user this version is about (see :mod:`memstack.foundation.keyspace.subjects`;
        default: the given entry's); ``Memory.forget(subject=…)`` then removes it, unless
        another version was saved over it. ``actor``: who saves, as the history records it
        (``api``, ``tool``, ``import``...; :data:`memstack.tiers.longterm.history.ACTOR_RULE`).
        ``create``: the id is an idempotency key: over an entry holding other content, the save
        is refused (checked inside the guarded write, so a concurrent update is never overwritten).

        Raises:
            InvalidValue: blank content, bad tags/metadata/time, both ``entry`` and fields, an
                unknown ``dedupe`` mode, or ``dedupe`` with an id; text with a lone surrogate,
                content over 1 MiB, metadata that breaks :mod:`memstack.foundation.limits` (the message names
                ``content``, ``tags[i]``, ``metadata['x']``...); both ``expires_at`` and ``ttl``,
                an expiry not in the future; an entry superseding itself, or becoming valid before
                an entry it supersedes; a bad actor.
            InvalidCategory: a category that breaks the path rule or is over 256 characters.
            InvalidKey: a bad id (of the entry or of one it supersedes).
            EntryNotFound: an id of ``supersedes`` that the scope does not hold (nothing is saved).
            AlreadyExists: ``create`` and the id holds other content (nothing is saved).
            Conflict: an entry of ``supersedes`` was already superseded by another one (nothing is
                saved), or the id kept changing under concurrent writers.
        """
        check_actor(actor)
        return self.put(SaveMemory.of(entry, **fields), dedupe=dedupe, actor=actor, create=create)

    def put(
        self,
        request: SaveMemory,
        *,
        dedupe: DedupeMode | None = None,
        actor: str = "api",
        create: bool = False,
    ) -> MemoryEntry:
        """:meth:`save` of a checked request (what the operations' handlers build).

        Raises:
            InvalidValue: an expiry not in the future, ``dedupe`` with an id, a bad actor.
            EntryNotFound, AlreadyExists, Conflict: as :meth:`save`.
        """
        check_actor(actor)
        now_s = self.engine.clock.now()
        if check_mode(dedupe) is not None:
            if not request.generated:
                raise InvalidValue(f"save(dedupe={dedupe!r}): only for a new entry (no id, no MemoryEntry)")
            expiry = expiry_of(request.expires_at, request.ttl, now_s)
            existing = self._duplicate_of(request.content, dedupe)
            if existing is not None:
                return self._save_over(existing, request, expiry or existing.expires_at, actor)
        plan = plan_of(request, now_s)
        if request.generated and not plan.superseded and dedupe is None:
            equal = self._equal_current(plan.template.content)
            if equal is not None:  # the same words again: that entry, nothing written
                return equal
        return self._upsert(plan, actor, create)

    def _upsert(self, plan: SavePlan, actor: str, create: bool = False) -> MemoryEntry:
        """Write the plan's version over its stored version (keeping what an update keeps) and
        close the entries it supersedes, in one guarded batch, again while concurrent writers win."""
        key = self.keys.entry(plan.id)
        for _ in range(SAVE_ATTEMPTS):
            raws = self.engine.mget([key, *(self.keys.entry(i) for i in plan.superseded)])
            old_raw = raws[0]
            now = now_of(self.engine)
            old = from_json(old_raw) if old_raw is not None else None
            new = plan.version(old, now)
            if create and old is not None and old.content != new.content:
                raise AlreadyExists(
                    f"memory {short_repr(plan.id)}: holds other content; a create never overwrites"
                )
            found = list(zip(plan.superseded, raws[1:], strict=True))
            closed = superseded_versions(new, found, now, self.scope)
            if old is not None and not closed and same_version(old, new):
                return old  # a retried save: no new version
            if self._write(new, old_raw, old, closed, actor=actor, op=None, related=plan.superseded):
                return new.copy()
        raise Conflict(
            f"memory {short_repr(plan.id)}: changed concurrently {SAVE_ATTEMPTS} times; save abandoned"
        )

    def _save_over(
        self, existing: MemoryEntry, request: SaveMemory, expires_at: datetime | None, actor: str
    ) -> MemoryEntry:
        """A deduplicated save: ``existing`` again, with the request's tags merged into its own
        (first spelling kept, case-insensitively), and the request's subject, validity, expiry and
        supersessions."""
        merged: dict[str, str] = {}
        for tag in (*existing.tags, *request.tags):
            merged.setdefault(tag.lower(), tag)
        again = replace(
            existing,
            tags=tuple(merged.values()),
            subject=request.subject,
            given_valid_from=request.valid_from,
            expires_at=expires_at,
        )
        return self.save(again, supersedes=request.supersedes, actor=actor)

    def save_many(
        self,
        items: Iterable[MemoryEntry | Mapping[str, Any]],
        *,
        batch_size: int = BATCH_ITEMS,
        actor: str = "api",
        progress: Callable[[int], None] | None = None,
    ) -> list[MemoryEntry]:
        """Save many memories: each item a :class:`MemoryEntry` or a mapping of :meth:`save`'s
        fields (``content``, ``id``, ``tags``, ``supersedes``, ``ttl``...; not ``dedupe``), checked
        and recorded in history exactly as :meth:`save` does; returns them as stored, in order.

        Items are written in batches of ``batch_size``, each one engine transaction: a batch is
        written whole or not at all. Vectors (with an embedder) are computed in the background in
        the embedder's batches. ``progress(n)`` is called after each batch with its item count.
        One batch may not save (or supersede) the same id twice.

        Raises:
            InvalidValue, InvalidCategory, InvalidKey, EntryNotFound, Conflict: as :meth:`save`,
                the message naming the item (``items[12]: content: ...``); nothing of its batch
                is written, the earlier batches stay saved (the error's note says how many items).
        """
        saved: list[MemoryEntry] = []
        save_many(self, items, batch_size=batch_size, actor=actor, progress=progress, collect=saved)
        return saved

    def restore(self, entry: MemoryEntry, *, actor: str = "import") -> MemoryEntry:
        """Write ``entry`` exactly as given (times and validity included), replacing any entry of
        its id; recorded in its history as a create or update by ``actor``.

        Used by imports, so an export round-trips exactly.

        Raises:
            InvalidValue, InvalidCategory, InvalidKey: as :meth:`save`.
            Conflict: as :meth:`save`.
        """
        check_actor(actor)
        new = MemoryEntry(
            id=normalise_id(entry.id),
            content=check_content(entry.content),
            category=check_category(entry.category),
            tags=check_tags(entry.tags),
            created_at=check_time(entry.created_at, "created_at") or entry.created_at,
            updated_at=check_time(entry.updated_at, "updated_at"),
            metadata=check_metadata(entry.metadata),
            subject=None if entry.subject is None else check_subject(entry.subject),
            given_valid_from=check_time(entry.given_valid_from, "valid_from"),
            valid_to=check_time(entry.valid_to, "valid_to"),
            superseded_by=None if entry.superseded_by is None else normalise_id(entry.superseded_by),
            expires_at=check_time(entry.expires_at, "expires_at"),
        )
        key = self.keys.entry(new.id)
        for _ in range(SAVE_ATTEMPTS):
            old_raw = self.engine.get(key)
            old = from_json(old_raw) if old_raw is not None else None
            if self._write(new, old_raw, old, [], actor=actor, op=None):
                return new.copy()
        raise Conflict(
            f"memory {short_repr(new.id)}: changed concurrently {SAVE_ATTEMPTS} times; restore abandoned"
        )

    def _equal_current(self, content: str) -> MemoryEntry | None:
        cache = self._fresh_cache()
        with cache.lock:
            found = equal_current(cache.filters.same_content(content), content, self.engine.clock.now())
            return None if found is None else found.copy()

    def _duplicate_of(self, content: str, mode: DedupeMode | None) -> MemoryEntry | None:
        if mode is None:
            return None
        cache = self._fresh_cache()
        now = self.engine.clock.now()
        with cache.lock:
            entries = [e.copy() for e in cache.entries.values() if current_at(e, now)]
            index = cache.index("default") if mode == "near" else None
            return find_duplicate(entries, content, mode, index)

    def embed_later(self, entry_id: str, text: str) -> None:
        """Queue the background vector computation of an entry written outside :meth:`save`
        (the dream passes write entries in their own batches); a no-op without an embedder."""
        if self._worker is not None:
            self._worker.submit(entry_id, text)

    def _write(
        self,
        new: MemoryEntry,
        old_raw: str | None,
        old: MemoryEntry | None,
        closed: list[tuple[str, str, MemoryEntry]],
        *,
        actor: str,
        op: str | None,
        related: tuple[str, ...] = (),
    ) -> bool:
        batch = self.engine.batch()
        guard_version(batch, self.keys, new.id, old_raw, closed)
        text_changed = queue_version(
            self.engine,
            batch,
            self.keys,
            self.scope,
            new,
            old_raw,
            old,
            closed,
            actor=actor,
            op=op,
            at=self.engine.clock.now(),
            related=related,
        )
        if not batch.execute().applied:
            return False
        if self._worker is not None and text_changed:
            self._worker.submit(new.id, document_text(new))
        snapshotter(self.engine, self.scope).touch()
        return True

    def snapshot(self) -> bool:
        """Write the scope's BM25 snapshot now (normally written in the background after writes
        settle, for scopes of 5,000 entries or more): a new process then answers its first plain
        BM25 search from it instead of building its cache first (see :mod:`memstack.tiers.longterm.cold`).
        False when the scope is empty or a deletion happened meanwhile.

        Raises:
            EngineError: the engine failed (nothing is written).
        """
        return take(self.engine, self.scope)

    def __repr__(self) -> str:
        return f"<LongTermMemory scope={self.scope!r} on {redact_url(self.engine.url)!r}>"
