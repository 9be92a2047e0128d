"""Pure search logic over plain entries: the BM25 document text, structural filters, recency.

Spec items 12, 13 and 16 of the RockBot long-term store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from .entry import MemoryEntry

__all__ = ["Filters", "distinct_sorted", "document_text", "most_recent"]


def document_text(entry: MemoryEntry) -> str:
    """What BM25 (and the embedder) sees: content, tags, category with ``/`` and ``-`` as spaces."""
    parts = [entry.content]
    if entry.tags:
        parts.append(" ".join(entry.tags))
    if entry.category is not None:
        parts.append(entry.category.replace("/", " ").replace("-", " "))
    return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Filters:
    """Structural filters, ANDed: category (exact or ``prefix/``, case-insensitive), every tag
    (case-insensitive), inclusive creation-time bounds, top-level metadata equality (``metadata``
    holds ``(key, canonical JSON)`` pairs, see :func:`~memstack.longterm.search_request.metadata_pairs`)."""

    category: str | None = None
    tags: tuple[str, ...] = ()
    created_after: datetime | None = None
    created_before: datetime | None = None
    metadata: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        """True when every entry passes."""
        return (
            self.category is None
            and not self.tags
            and self.created_after is None
            and self.created_before is None
            and not self.metadata
        )

    def passes(self, entry: MemoryEntry) -> bool:
        """True if ``entry`` satisfies every filter; a null category never passes a category filter."""
        if self.category is not None:
            if entry.category is None:
                return False
            have, want = entry.category.casefold(), self.category.casefold()
            if have != want and not have.startswith(want + "/"):
                return False
        if self.tags:
            have_tags = {t.casefold() for t in entry.tags}
            if any(t.casefold() not in have_tags for t in self.tags):
                return False
        if self.created_after is not None and entry.created_at < self.created_after:
            return False
        if self.metadata and not _metadata_matches(entry, self.metadata):
            return False
        return not (self.created_before is not None and entry.created_at > self.created_before)

    def apply(self, entries: Iterable[MemoryEntry]) -> list[MemoryEntry]:
        """The entries that pass, in the given order."""
        return [e for e in entries if self.passes(e)]


def _metadata_matches(entry: MemoryEntry, pairs: tuple[tuple[str, str], ...]) -> bool:
    have = entry.metadata or {}
    for key, want in pairs:
        if key not in have:
            return False
        if json.dumps(have[key], sort_keys=True, separators=(",", ":"), ensure_ascii=False) != want:
            return False
    return True


def most_recent(entries: Iterable[MemoryEntry], limit: int) -> list[MemoryEntry]:
    """The ``limit`` most recently changed entries (``updated_at or created_at`` descending;
    ties by id so the order is stable)."""
    ordered = sorted(entries, key=lambda e: e.id)
    ordered.sort(key=lambda e: e.last_changed, reverse=True)
    return ordered[:limit]


def distinct_sorted(values: Sequence[str]) -> list[str]:
    """Distinct case-insensitively (first spelling kept), sorted case-insensitively (spec item 11)."""
    seen: dict[str, str] = {}
    for value in values:
        seen.setdefault(value.casefold(), value)
    return sorted(seen.values(), key=lambda v: (v.casefold(), v))
