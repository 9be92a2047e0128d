"""Working memory's requests: one typed object per write and search, owned by the tier and
checked once.

Each field's rule lives here and only here: :data:`RULES` gives what a door shows of it (its
description and JSON-schema bounds, for the documents), the ``of`` constructors run the tier's
checks (:func:`~memstack.tiers.working.entry.check_ttl`, ``check_category``, ``check_tags``...).
The keyword methods (``WorkingMemory.set(key, value, ttl=…)``) and the operations' handlers both
build a request with ``of``, so a bad value gets the same error class and message on every door.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypedDict, Unpack

from ...foundation import limits
from ...foundation.errors import InvalidValue
from ...foundation.keyspace import check_subject
from ...foundation.limits import MAX_TTL_SECONDS, short_repr
from ...foundation.rules import Rule
from .entry import MAX_CATEGORY_LENGTH, MAX_TAG_LENGTH, check_category, check_tags, check_ttl

__all__ = ["RULES", "Rule", "SearchEntries", "SearchOptions", "SetEntry", "SetOptions"]


RULES: Final[Mapping[str, Rule]] = {
    "ttl": Rule("Seconds to live (default 300).", {"exclusiveMinimum": 0, "maximum": MAX_TTL_SECONDS}),
    "category": Rule(
        "A category path: segments of [A-Za-z0-9_-] joined by '/'.", {"maxLength": MAX_CATEGORY_LENGTH}
    ),
    "tags": Rule(f"Tags: a list or 'a, b' (each at most {MAX_TAG_LENGTH} characters)."),
    "subject": Rule("The end user this is about (for forget).", {"maxLength": 256}),
    "query": Rule("Words to search for; absent: the newest."),
    "filter_category": Rule("That category or a sub-category."),
    "filter_tags": Rule("Tags that must all be present: a list or 'a, b'."),
    "max_results": Rule("Most entries.", {"minimum": 1}),
}
"""Field name -> its rule as the doors show it."""


class SetOptions(TypedDict, total=False):
    """A write's optional fields, as ``WorkingMemory.set`` takes them."""

    ttl: float | None
    category: str | None
    tags: Sequence[str] | None
    subject: str | None


class SearchOptions(TypedDict, total=False):
    """A search's fields, as ``WorkingMemory.search`` takes them."""

    query: str | None
    category: str | None
    tags: Sequence[str] | None
    prefix: str | None
    max_results: int


@dataclass(frozen=True, slots=True)
class SetEntry:
    """A checked write: ``ttl_ms`` is None for the memory's default TTL."""

    key: str
    value: Any
    ttl_ms: int | None = None
    category: str | None = None
    tags: tuple[str, ...] = ()
    subject: str | None = None

    @classmethod
    def of(cls, key: str, value: Any, **options: Unpack[SetOptions]) -> SetEntry:
        """The write, its fields checked (the key is resolved by the namespace that writes it).

        Raises:
            InvalidValue: a ``ttl`` not in (0, 10 years], bad tags or subject; names the field.
            InvalidCategory: an ill-formed category path, or one over 256 characters.
        """
        ttl, subject = options.get("ttl"), options.get("subject")
        return cls(
            key,
            value,
            None if ttl is None else check_ttl(ttl),
            check_category(options.get("category")),
            check_tags(options.get("tags")),
            None if subject is None else check_subject(subject),
        )


@dataclass(frozen=True, slots=True)
class SearchEntries:
    """A checked search: filters, where, and how many."""

    query: str | None = None
    category: str | None = None
    tags: tuple[str, ...] = ()
    prefix: str | None = None
    max_results: int = 20

    @classmethod
    def of(cls, **options: Unpack[SearchOptions]) -> SearchEntries:
        """The search, its fields checked (the prefix is checked where it is resolved).

        Raises:
            InvalidValue: ``max_results`` not an int >= 1, bad tags, a ``query`` or ``category``
                that is not a string (or None) or holds a lone surrogate.
        """
        query, category = options.get("query"), options.get("category")
        max_results = options.get("max_results", 20)
        if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
            raise InvalidValue(f"max_results {short_repr(max_results)}: must be an int of at least 1")
        if query is not None:
            limits.check_text(query, "query")
        if category is not None:
            limits.check_text(category, "category")
        return cls(query, category, check_tags(options.get("tags")), options.get("prefix"), max_results)
