"""Conversation-aware indexing: the threads of one scope and its context-field BM25 indexes.

An entry with conversation provenance (:mod:`.provenance`) gets a second searchable field, its
*context*: the speaker, the session date and the contents of the ``window`` turns before and after it
in its conversation. So a turn such as "Yes, in Chicago" is found by a question about where someone
moved, through the question its neighbour asked. The field lives in its own BM25 index per
(BM25 profile, window), kept up to date incrementally: a change to one turn re-indexes only the
turns whose window holds it (before or after the change).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from ...search import Bm25Index
from ...search.thread_table import ThreadTable
from .entry import MemoryEntry
from .provenance import Provenance, provenance
from .relative_dates import resolved_dates

__all__ = ["ConversationThreads", "context_text"]


def _date(prov: Provenance) -> str:
    when = prov.time
    return "" if when is None else f"{when.day} {when:%B} {when.year}"


def context_text(prov: Provenance, neighbours: Iterable[MemoryEntry], content: str = "") -> str:
    """The context field: speaker, session date, the dates the entry's own ``content`` names relatively
    (:mod:`.relative_dates`), then the neighbours' contents."""
    dates = [] if prov.time is None or not content else resolved_dates(content, prov.time)
    parts = [prov.speaker or "", _date(prov), *dates, *(e.content for e in neighbours)]
    return " ".join(p for p in parts if p)


class ConversationThreads:
    """Which entries of a scope belong to which conversation, in turn order, and the context indexes.

    Not thread-safe on its own: the owning :class:`~memstack.tiers.longterm.index_cache.ScopeCache` calls it
    under its lock.
    """

    def __init__(self) -> None:
        self._of: dict[str, Provenance] = {}
        self._members: dict[str, set[str]] = {}
        self._order: dict[str, tuple[list[str], dict[str, int]]] = {}  # dropped when membership changes
        self.indexes: dict[tuple[str, int], Bm25Index] = {}

    def __len__(self) -> int:
        return len(self._of)

    def _ordered(self, conversation: str) -> tuple[list[str], dict[str, int]]:
        found = self._order.get(conversation)
        if found is None:
            members = self._members.get(conversation, set())
            ids = sorted(members, key=lambda i: (self._of[i].turn, i))
            found = self._order[conversation] = (ids, {i: n for n, i in enumerate(ids)})
        return found

    def neighbours(self, entry_id: str, window: int) -> list[str]:
        """The ids of the ``window`` turns before and after ``entry_id`` (empty without provenance)."""
        prov = self._of.get(entry_id)
        if prov is None or window <= 0:
            return []
        ids, position = self._ordered(prov.conversation)
        at = position[entry_id]
        return ids[max(0, at - window) : at] + ids[at + 1 : at + 1 + window]

    def session(self, entry_id: str) -> tuple[str, datetime | None] | None:
        """The entry's session: its conversation id and session time (None without provenance).

        Turns of one conversation with the same provenance ``time`` (the entry's ``created_at`` when
        the provenance has none) belong to the same session."""
        prov = self._of.get(entry_id)
        if prov is None:
            return None
        return prov.conversation, prov.time

    def speaker(self, entry_id: str) -> str | None:
        """The entry's speaker (None without provenance or speaker)."""
        prov = self._of.get(entry_id)
        return None if prov is None else prov.speaker

    def table(self) -> ThreadTable:
        """The conversations as a :class:`~memstack.search.thread_table.ThreadTable` (conversations in
        id order), for propagation; a new one on every call, so the caller keeps it until a change."""
        ordered = (self._ordered(conversation)[0] for conversation in sorted(self._members))
        return ThreadTable.build(ordered, self.session, self.speaker)

    def _around(self, ids: Iterable[str]) -> set[str]:
        window = max((w for _, w in self.indexes), default=0)
        out: set[str] = set()
        for entry_id in ids:
            if entry_id in self._of:
                out.add(entry_id)
                out.update(self.neighbours(entry_id, window))
        return out

    def apply(self, changed: Iterable[str], entries: Mapping[str, MemoryEntry]) -> None:
        """Take the new state of the ``changed`` ids (absent from ``entries``: deleted) into account."""
        changed = list(changed)
        touched = self._around(changed) if self.indexes else set()
        for entry_id in changed:
            old = self._of.pop(entry_id, None)
            if old is not None:
                self._members[old.conversation].discard(entry_id)
                self._order.pop(old.conversation, None)
            entry = entries.get(entry_id)
            new = None if entry is None else provenance(entry)
            if new is not None:
                self._of[entry_id] = new
                self._members.setdefault(new.conversation, set()).add(entry_id)
                self._order.pop(new.conversation, None)
            if old is not None and not self._members[old.conversation]:
                del self._members[old.conversation]
        if not self.indexes:
            return
        touched |= self._around(changed)
        touched.update(changed)
        for (_, window), index in self.indexes.items():
            for entry_id in touched:
                text = self._text(entry_id, window, entries)
                if text:
                    index.add(entry_id, text)
                else:
                    index.remove(entry_id)

    def _text(self, entry_id: str, window: int, entries: Mapping[str, MemoryEntry]) -> str:
        prov = self._of.get(entry_id)
        if prov is None:
            return ""
        own = entries.get(entry_id)
        return context_text(
            prov,
            (entries[i] for i in self.neighbours(entry_id, window) if i in entries),
            "" if own is None else own.content,
        )

    def index(self, profile: str, window: int, entries: Mapping[str, MemoryEntry]) -> Bm25Index:
        """The context-field index of BM25 ``profile`` and ``window`` (built on first use)."""
        key = (profile, window)
        index = self.indexes.get(key)
        if index is None:
            index = Bm25Index(profile=profile)
            for entry_id in sorted(self._of):
                text = self._text(entry_id, window, entries)
                if text:
                    index.add(entry_id, text)
            self.indexes[key] = index
        return index
