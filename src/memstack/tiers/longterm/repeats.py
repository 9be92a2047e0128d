"""Writes that repeat do not multiply: the pure rules of a save that changes nothing.

- A save of new content (no id) equal to a current entry of the scope, after normalising case,
  whitespace and edge punctuation (:func:`memstack.tiers.longterm.similar.normalise_text`), is that
  entry: nothing is written (near-duplicates stay the dedupe pass's job).
- A save over an entry that would write exactly what it holds (a retried save) writes nothing: no
  new history version.

Pure functions over entries, so every writer of single entries and of batches applies one rule.
"""

from __future__ import annotations

from collections.abc import Iterable

from .entry import MemoryEntry, current_at
from .similar import normalise_text

__all__ = ["equal_current", "same_version"]


def equal_current(entries: Iterable[MemoryEntry], content: str, now: float) -> MemoryEntry | None:
    """The oldest entry of ``entries`` current at ``now`` whose content equals ``content`` once
    normalised, or None."""
    key = normalise_text(content)
    found = [e for e in entries if current_at(e, now) and normalise_text(e.content) == key]
    return min(found, key=lambda e: (e.created_at, e.id), default=None)


def same_version(old: MemoryEntry, new: MemoryEntry) -> bool:
    """Whether writing ``new`` over ``old`` would change nothing a reader sees but the update
    time: same content, category, tags, metadata, subject, validity and expiry."""
    return (
        old.content == new.content
        and old.category == new.category
        and old.tags == new.tags
        and (old.metadata or None) == (new.metadata or None)
        and old.subject == new.subject
        and old.given_valid_from == new.given_valid_from
        and old.valid_to == new.valid_to
        and old.superseded_by == new.superseded_by
        and old.expires_at == new.expires_at
    )
