"""Postings for the filter language on one scope: a filtered search intersects sets instead of testing
every entry (tests/tiers/longterm/test_filter_index.py; ``filtered_vs_unfiltered`` in bench/search_speed.py).

Kept by each scope's :class:`~memstack.tiers.longterm.index_cache.ScopeCache` and updated by the same
incremental change log as its BM25 index, so it is as fresh as the cache in every process:

* tag (case-folded) → ids;
* category (case-folded, full path) → ids; an equality unions the categories under it (few);
* top-level metadata ``(key, canonical value)`` → ids, and ``(key, item)`` for each item of a list value;
* ``(created_at, id)`` sorted, for time ranges (bisect).

A filter's conditions these sets answer (equality, ``$in`` and ``$contains`` on tags, categories
and top-level metadata; comparisons of ``created_at``; ``id``) are answered from them, combined
through ``$and``/``$or``/``$not``; what is left undecided is tested entry by entry
(:func:`memstack.search.filter_eval.allowed`).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Collection, Iterable
from typing import Any, TypeVar

from ...search.filter_ast import Condition, Filter, combine
from ...search.filter_eval import allowed as allowed_by
from ...search.filter_eval import canonical, matches
from .entry import MemoryEntry
from .query import Filters, builtin_of
from .similar import normalise_text

__all__ = ["FilterIndex"]

K = TypeVar("K")


class FilterIndex:
    """The postings of one scope's entries (not thread-safe: the cache's lock guards it)."""

    def __init__(self) -> None:
        self._tags: defaultdict[str, set[str]] = defaultdict(set)
        self._categories: defaultdict[str, set[str]] = defaultdict(set)
        self._metadata: defaultdict[tuple[str, Any], set[str]] = defaultdict(set)
        self._created: list[tuple[float, str]] = []
        self._of: dict[str, MemoryEntry] = {}
        # hash of the normalised content -> ids: a save of new content finds an equal current entry
        # among these few instead of normalising every entry of the scope (hashes, not the texts:
        # an int per entry; a collision only adds a candidate the caller compares in full).
        self._contents: dict[int, tuple[str, ...]] = {}

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
        for pair in _pairs(entry):
            self._metadata[pair].add(entry.id)
        bisect.insort(self._created, (entry.created_at.timestamp(), entry.id))
        key = hash(normalise_text(entry.content))
        self._contents[key] = (*self._contents.get(key, ()), entry.id)

    def remove(self, entry_id: str) -> None:
        """Forget ``entry_id`` (a no-op when it is not indexed)."""
        entry = self._of.pop(entry_id, None)
        if entry is None:
            return
        for tag in {t.casefold() for t in entry.tags}:
            _discard(self._tags, tag, entry_id)
        if entry.category is not None:
            _discard(self._categories, entry.category.casefold(), entry_id)
        for pair in _pairs(entry):
            _discard(self._metadata, pair, entry_id)
        at = bisect.bisect_left(self._created, (entry.created_at.timestamp(), entry_id))
        if at < len(self._created) and self._created[at] == (entry.created_at.timestamp(), entry_id):
            del self._created[at]
        key = hash(normalise_text(entry.content))
        rest = tuple(i for i in self._contents.get(key, ()) if i != entry_id)
        if rest:
            self._contents[key] = rest
        else:
            self._contents.pop(key, None)

    def same_content(self, content: str) -> list[MemoryEntry]:
        """The entries whose content may equal ``content`` once normalised (every one that does,
        and rarely another: compare them with
        :func:`~memstack.tiers.longterm.similar.normalise_text`)."""
        return [self._of[i] for i in self._contents.get(hash(normalise_text(content)), ())]

    def allowed(self, filters: Filters | Filter | None) -> set[str] | None:
        """The ids passing ``filters`` (None when nothing is filtered: every entry passes).

        The result may be one of the index's own postings: read it, never change it.
        """
        flt = combine(filters.to_node()) if isinstance(filters, Filters) else filters
        if flt is None:
            return None
        of = self._of
        found = allowed_by(flt, self, lambda i: matches(flt, of[i].metadata or {}, builtin_of(of[i])))
        return found if isinstance(found, set) else set(found)

    def created_after(self, at: float) -> set[str]:
        """The ids created after ``at`` (epoch seconds)."""
        return self._times("$gt", at)

    # -- the Postings protocol of memstack.search.filter_eval ----------------------------------
    def universe(self) -> Collection[str]:
        """Every indexed id."""
        return self._of.keys()

    def lookup(self, cond: Condition) -> Collection[str] | None:
        """The ids passing ``cond`` exactly, or None when the postings cannot tell."""
        op, operand = cond.op, cond.operand
        items: tuple[Any, ...] | None = (
            operand if op == "$in" else (operand,) if op == "$eq" else None
        )  # fmt: skip
        if cond.builtin == "tags":
            return self._tag_ids(op, operand, items)
        if cond.builtin == "created_at" and (op in ("$gt", "$gte", "$lt", "$lte") or items is not None):
            return self._times(op, operand)
        if items is None:
            return None  # the other postings answer equality and membership only
        if cond.builtin == "category":
            return self._category_ids(items)
        if cond.builtin == "id":
            return {i for i in items if isinstance(i, str) and i in self._of}
        if cond.builtin is None and len(cond.path) == 1 and "." not in cond.path[0]:
            return self._metadata_ids(cond.path[0], items, members=op == "$in")
        return None

    def _tag_ids(self, op: str, operand: Any, items: tuple[Any, ...] | None) -> Collection[str] | None:
        if op == "$contains":
            wanted = operand if isinstance(operand, tuple) else (operand,)
            return _intersection(self._tags.get(t, set()) for t in wanted)
        if items is None:
            return None
        return _union(self._tags.get(t, set()) for t in items)

    def _category_ids(self, items: tuple[Any, ...]) -> set[str]:
        """A category passes as itself or as a sub-path of one of ``items``."""
        return _union(
            ids for c, ids in self._categories.items() for w in items if c == w or c.startswith(w + "/")
        )

    def _metadata_ids(self, key: str, items: tuple[Any, ...], *, members: bool) -> set[str] | None:
        """``members``: ``$in``, where a list value passes by one of its items."""
        if any(i is None for i in items):
            return None  # a missing key equals null: the postings do not list absences
        return _union(
            self._metadata.get(pair, set())
            for i in items
            for pair in ((key, canonical(i)), (key, (_ITEM, canonical(i))))[: 2 if members else 1]
        )

    def _times(self, op: str, operand: Any) -> set[str]:
        times = self._created
        points = operand if op == "$in" else (operand,)
        if op in ("$eq", "$in"):
            out: set[str] = set()
            for t in points:
                low = bisect.bisect_left(times, (t, ""))
                high = bisect.bisect_right(times, (t, "\U0010ffff"))
                out.update(i for _, i in times[low:high])
            return out
        # every id sorts below "\U0010ffff": an entry created exactly at a bound is kept by >=, <=
        low, high = 0, len(times)
        if op == "$gt":
            low = bisect.bisect_right(times, (operand, "\U0010ffff"))
        elif op == "$gte":
            low = bisect.bisect_left(times, (operand, ""))
        elif op == "$lt":
            high = bisect.bisect_left(times, (operand, ""))
        else:
            high = bisect.bisect_right(times, (operand, "\U0010ffff"))
        return {i for _, i in times[low:high]}


_ITEM = "item"


def _pairs(entry: MemoryEntry) -> set[tuple[str, Any]]:
    """The metadata postings of ``entry``: each top-level value, and each item of a list value."""
    pairs: set[tuple[str, Any]] = set()
    for key, value in (entry.metadata or {}).items():
        pairs.add((key, canonical(value)))
        if isinstance(value, list):
            pairs.update((key, (_ITEM, canonical(item))) for item in value)
    return pairs


def _union(sets: Iterable[set[str]]) -> set[str]:
    out: set[str] = set()
    for ids in sets:
        out |= ids
    return out


def _intersection(sets: Iterable[set[str]]) -> Collection[str]:
    ordered = sorted(sets, key=len)
    if not ordered:
        return set()
    if len(ordered) == 1:
        return ordered[0]  # the posting itself, not a copy: callers only read it
    return ordered[0].intersection(*ordered[1:])


def _discard(postings: defaultdict[K, set[str]], key: K, entry_id: str) -> None:
    ids = postings.get(key)
    if ids is not None:
        ids.discard(entry_id)
        if not ids:
            del postings[key]
