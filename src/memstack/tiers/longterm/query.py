"""Pure search logic over plain entries: the BM25 document text, structural filters, recency.

The rules of RockBot's long-term store: the same document text, filters and recency order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from ...search.filter_ast import AllOf, Condition, FieldSet, Node, combine
from ...search.filter_eval import MISSING, matches
from .entry import MemoryEntry

__all__ = ["LONG_TERM_FIELDS", "Filters", "builtin_of", "distinct_sorted", "document_text", "most_recent"]

LONG_TERM_FIELDS: Final = FieldSet(
    "long-term memory",
    {
        "id": "text",
        "content": "text",
        "category": "category",
        "tags": "tags",
        "created_at": "time",
        "updated_at": "time",
        "valid_from": "time",
        "valid_to": "time",
        "expires_at": "time",
        "superseded_by": "text",
    },
    "metadata",
    True,
)
"""The filter language's fields of a long-term entry (its user data: ``metadata``)."""


def builtin_of(entry: MemoryEntry) -> Callable[[str], Any]:
    """A built-in field's value of ``entry`` (times as epoch seconds), as the filter language asks."""

    def field(name: str) -> Any:
        if name == "id":
            return entry.id
        if name == "content":
            return entry.content
        if name == "category":
            return MISSING if entry.category is None else entry.category
        if name == "tags":
            return entry.tags
        if name == "superseded_by":
            return MISSING if entry.superseded_by is None else entry.superseded_by
        when = {
            "created_at": entry.created_at,
            "updated_at": entry.updated_at,
            "valid_from": entry.valid_from,
            "valid_to": entry.valid_to,
            "expires_at": entry.expires_at,
        }[name]
        return MISSING if when is None else when.timestamp()

    return field


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
    """The search parameters that filter, ANDed: category (exact or ``prefix/``, case-insensitive),
    every tag (case-insensitive), inclusive creation-time bounds, top-level metadata equality
    (``metadata`` holds ``(key, canonical JSON)`` pairs, see
    :func:`~memstack.tiers.longterm.search_request.metadata_pairs`). They are a part of the filter
    language (:meth:`to_node`), which decides what passes."""

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
        flt = combine(self.to_node())
        return flt is None or matches(flt, entry.metadata or {}, builtin_of(entry))

    def apply(self, entries: Iterable[MemoryEntry]) -> list[MemoryEntry]:
        """The entries that pass, in the given order."""
        return [e for e in entries if self.passes(e)]

    def to_node(self) -> Node | None:
        """These filters in the filter language (None when empty): one rule for both."""
        kinds = LONG_TERM_FIELDS.builtins
        parts: list[Node] = []
        if self.category is not None:
            parts.append(Condition("$eq", self.category.casefold(), "category", kinds["category"]))
        parts.extend(Condition("$contains", t.casefold(), "tags", kinds["tags"]) for t in self.tags)
        if self.created_after is not None:
            parts.append(Condition("$gte", self.created_after.timestamp(), "created_at", "time"))
        if self.created_before is not None:
            parts.append(Condition("$lte", self.created_before.timestamp(), "created_at", "time"))
        for key, canonical in self.metadata:
            value = json.loads(canonical)
            if value is None:  # the key must be there: a missing key is not a null one here
                parts.append(Condition("$exists", True, path=(key,)))
            parts.append(Condition("$eq", value, path=(key,)))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def most_recent(entries: Iterable[MemoryEntry], limit: int) -> list[MemoryEntry]:
    """The ``limit`` most recently changed entries (``updated_at or created_at`` descending;
    ties by id so the order is stable)."""
    ordered = sorted(entries, key=lambda e: e.id)
    ordered.sort(key=lambda e: e.last_changed, reverse=True)
    return ordered[:limit]


def distinct_sorted(values: Sequence[str]) -> list[str]:
    """Distinct case-insensitively (first spelling kept), sorted case-insensitively."""
    seen: dict[str, str] = {}
    for value in values:
        seen.setdefault(value.casefold(), value)
    return sorted(seen.values(), key=lambda v: (v.casefold(), v))
