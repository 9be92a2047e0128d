"""Postings for the structural filters: a filtered search intersects sets instead of testing every
entry (tests/longterm/test_filter_index.py; ``filtered_vs_unfiltered`` in bench/search_speed.py).

Kept by each scope's :class:`~memstack.longterm.index_cache.ScopeCache` and updated by the same
incremental change log as its BM25 index, so it is as fresh as the cache in every process:

* tag (case-folded) → ids;
* category (case-folded, full path) → ids; a prefix filter unions the categories under it (few);
* top-level metadata ``(key, canonical JSON)`` → ids;
* ``(created_at, id)`` sorted, for time ranges (bisect).
"""

from __future__ import annotations

import bisect
import json
from collections import defaultdict
from typing import TypeVar

from .entry import MemoryEntry
from .query import Filters

__all__ = ["FilterIndex"]

K = TypeVar("K")


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class FilterIndex:
    """The postings of one scope's entries (not thread-safe: the cache's lock guards it)."""

    def __init__(self) -> None:
        self._tags: defaultdict[str, set[str]] = defaultdict(set)
        self._categories: defaultdict[str, set[str]] = defaultdict(set)
        self._metadata: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
        self._created: list[tuple[float, str]] = []
        self._of: dict[str, MemoryEntry] = {}

    def __len__(self) -> int:
        return len(self._of)

    def add(self, entry: MemoryEntry) -> None:
        """Index ``entry`` (replacing what was indexed under its id)."""
        self.remove(entry.id)
        self._of[entry.id] = entry
        for tag in {t.casefold() for t in entry.tags}:
            self._tags[tag].add(entry.id)
        if entry.category is not None:
            self._categories[entry.category.casefold()].add(entry.id)
        for key, value in (entry.metadata or {}).items():
            self._metadata[(key, _canonical(value))].add(entry.id)
        bisect.insort(self._created, (entry.created_at.timestamp(), entry.id))

    def remove(self, entry_id: str) -> None:
        """Forget ``entry_id`` (a no-op when it is not indexed)."""
        entry = self._of.pop(entry_id, None)
        if entry is None:
            return
        for tag in {t.casefold() for t in entry.tags}:
            _discard(self._tags, tag, entry_id)
        if entry.category is not None:
            _discard(self._categories, entry.category.casefold(), entry_id)
        for key, value in (entry.metadata or {}).items():
            _discard(self._metadata, (key, _canonical(value)), entry_id)
        at = bisect.bisect_left(self._created, (entry.created_at.timestamp(), entry_id))
        if at < len(self._created) and self._created[at] == (entry.created_at.timestamp(), entry_id):
            del self._created[at]

    def allowed(self, filters: Filters) -> set[str] | None:
        """The ids passing ``filters`` (None when nothing is filtered: every entry passes).

        The set may be one of the index's own postings: read it, never change it.
        """
        if filters.empty:
            return None
        sets: list[set[str]] = []
        for tag in filters.tags:
            sets.append(self._tags.get(tag.casefold(), set()))
        if filters.category is not None:
            want = filters.category.casefold()
            below = want + "/"
            sets.append(
                set().union(*(ids for c, ids in self._categories.items() if c == want or c.startswith(below)))
            )
        for pair in filters.metadata:
            sets.append(self._metadata.get(pair, set()))
        if filters.created_after is not None or filters.created_before is not None:
            low = (
                0
                if filters.created_after is None
                else bisect.bisect_left(self._created, (filters.created_after.timestamp(), ""))
            )
            high = len(self._created)
            if filters.created_before is not None:
                # every id sorts below "\U0010ffff": an entry created exactly at the bound is kept
                high = bisect.bisect_right(self._created, (filters.created_before.timestamp(), "\U0010ffff"))
            sets.append({entry_id for _, entry_id in self._created[low:high]})
        sets.sort(key=len)
        if len(sets) == 1:
            return sets[0]  # the posting itself, not a copy: callers only read it
        result = sets[0] & sets[1]
        for other in sets[2:]:
            result &= other
            if not result:
                break
        return result


def _discard(postings: defaultdict[K, set[str]], key: K, entry_id: str) -> None:
    ids = postings.get(key)
    if ids is not None:
        ids.discard(entry_id)
        if not ids:
            del postings[key]
