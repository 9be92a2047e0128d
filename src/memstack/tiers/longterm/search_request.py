"""The one set of search parameters every surface takes, checked once.

| name | type | meaning |
|---|---|---|
| ``query`` | text or None | what to look for; blank or None lists the most recently changed entries |
| ``mode`` | ``auto`` / ``bm25`` / ``hybrid`` | ``auto``: hybrid when an embedder is configured, else BM25 |
| ``category`` | text | exact category or any ``category/…`` below it (case-insensitive) |
| ``tags`` | list of text (or comma-separated) | every tag must be present (case-insensitive) |
| ``created_after`` / ``created_before`` | time | inclusive creation-time bounds |
| ``metadata`` | object | every top-level key must equal the given JSON value |
| ``filter`` | object | the filter language (:mod:`memstack.search.filters`), ANDed with the above |
| ``limit`` | int >= 1 | how many hits at most (the library also accepts the seed's ``max_results``) |
| ``offset`` | int 0..:data:`MAX_OFFSET` | hits to skip first (paging) |
| ``min_score`` | number | drop ranked hits whose final score is below it |
| ``include_history`` | bool | also superseded entries (default: current ones only) |
| ``include_expired`` | bool | also expired entries not yet swept (audits) |
| ``as_of`` | time | the entries valid at that time (:mod:`.validity`) |

The library, the CLI, HTTP, the MCP tools and the adapters use these names. ``filter`` reaches the
built-in fields ``id content category tags created_at updated_at valid_from valid_to expires_at
superseded_by`` and ``metadata``; the other
filtering parameters are a part of the language (:meth:`~memstack.tiers.longterm.query.Filters.to_node`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from ...foundation.errors import InvalidFilter, InvalidValue
from ...foundation.jsontext import loads
from ...foundation.limits import MAX_SEARCH_OFFSET, check_text, encode_json, short_repr
from ...search.filters import Filter, combine, parse_filter
from .query import LONG_TERM_FIELDS, Filters
from .validate import check_tags, check_time
from .validity import View, check_view

__all__ = [
    "MAX_OFFSET",
    "MODES",
    "SearchRequest",
    "filter_from_text",
    "metadata_from_text",
    "metadata_pairs",
    "search_request",
]

MODES: Final = ("auto", "bm25", "hybrid")
"""Search modes, in the order surfaces list them."""
MAX_OFFSET: Final = MAX_SEARCH_OFFSET
"""The deepest page a search reaches: ``offset`` at most this (``limits.MAX_SEARCH_OFFSET``)."""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A checked search: what to rank, how, under which filters, and how many to keep."""

    query: str | None
    mode: str
    filters: Filters
    limit: int
    min_score: float | None
    filter: Filter | None = None  # the parameters' filters and ``filter=`` as one filter
    offset: int = 0
    view: View = field(default_factory=View)

    @property
    def ranked(self) -> bool:
        """True when there is a non-blank query to rank by (else a recency listing)."""
        return self.query is not None and bool(self.query.strip())


def metadata_pairs(metadata: object) -> tuple[tuple[str, str], ...]:
    """``metadata`` as sorted ``(key, canonical JSON of the value)`` pairs; None gives ``()``.

    Values compare by their canonical JSON, so ``1`` and ``true`` (equal in Python) differ.

    Raises:
        InvalidValue: not a mapping with string keys, or a value that is not JSON within
            :mod:`memstack.foundation.limits` (the message names ``metadata['key']``).
    """
    if metadata is None:
        return ()
    if not isinstance(metadata, Mapping):
        raise InvalidValue(f"metadata {short_repr(metadata)}: must be an object of key to JSON value")
    pairs = []
    for key, value in metadata.items():
        if not isinstance(key, str):
            raise InvalidValue(f"metadata key {short_repr(key)}: must be a string")
        check_text(key, "metadata key")
        encode_json(value, f"metadata[{key!r}]")  # the limits' rules, with the field named
        pairs.append((key, json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)))
    return tuple(sorted(pairs))


def metadata_from_text(text: str | None) -> dict[str, object] | None:
    """A metadata filter given as JSON object text (CLI ``--metadata``, HTTP ``?metadata=``);
    None or blank gives None.

    The text is read by :func:`~memstack.foundation.jsontext.loads`: nesting past
    :data:`~memstack.foundation.limits.MAX_DEPTH`
    (measured before parsing, so never a ``RecursionError``), lone surrogates, ``NaN`` and
    over-long integers are refused like any other value.

    Raises:
        InvalidValue: not JSON, JSON breaking a value limit, or JSON that is not an object
            (names ``metadata``).
    """
    return _object_from_text(text, "metadata", "key to value", InvalidValue)


def filter_from_text(text: str | None) -> dict[str, object] | None:
    """A filter given as JSON object text (CLI ``--filter``, HTTP ``?filter=``); None or blank
    gives None.

    Raises:
        InvalidFilter: not JSON, or JSON that is not an object (names ``filter``).
    """
    return _object_from_text(text, "filter", "field to condition", InvalidFilter)


def _object_from_text(
    text: str | None, name: str, shape: str, error: type[InvalidValue]
) -> dict[str, object] | None:
    if text is None or not text.strip():
        return None
    try:
        value = loads(text, name)
    except InvalidValue as exc:
        if isinstance(exc, error):
            raise
        raise error(str(exc)) from None
    if not isinstance(value, dict):
        raise error(f"{name} {short_repr(text)}: must be a JSON object of {shape}")
    return value


def search_request(
    query: str | None = None,
    *,
    mode: str = "auto",
    category: str | None = None,
    tags: Iterable[str] | str | None = None,
    created_after: datetime | float | None = None,
    created_before: datetime | float | None = None,
    metadata: Mapping[str, object] | None = None,
    limit: int = 20,
    min_score: float | None = None,
    limit_name: str = "limit",
    filter: Mapping[str, object] | None = None,  # noqa: A002 - the filter language's public name
    offset: int = 0,
    include_history: bool = False,
    include_expired: bool = False,
    as_of: datetime | float | None = None,
) -> SearchRequest:
    """Check every parameter and build the request (``limit_name`` names ``limit`` in errors).

    Raises:
        InvalidValue: a parameter breaking its rule in the module table (the message names it).
        InvalidFilter: a ``filter`` breaking the filter language.
    """
    if query is not None:
        check_text(query, "query")
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidValue(f"mode {short_repr(mode)}: must be one of {', '.join(MODES)}")
    if category is not None:
        check_text(category, "category")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidValue(f"{limit_name} {short_repr(limit)}: must be an int >= 1")
    if min_score is not None and (
        isinstance(min_score, bool) or not isinstance(min_score, int | float) or min_score != min_score
    ):
        raise InvalidValue(f"min_score {short_repr(min_score)}: must be a number or None")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise InvalidValue(f"offset {short_repr(offset)}: must be an int from 0 to {MAX_OFFSET}")
    view = check_view(include_history, include_expired, as_of)
    parsed = parse_filter(filter, LONG_TERM_FIELDS)
    filters = Filters(
        category=category.strip() if category is not None and category.strip() else None,
        tags=check_tags(tags),
        created_after=check_time(created_after, "created_after"),
        created_before=check_time(created_before, "created_before"),
        metadata=metadata_pairs(metadata),
    )
    return SearchRequest(
        query,
        mode,
        filters,
        limit,
        None if min_score is None else float(min_score),
        combine(filters.to_node(), parsed),
        offset,
        view,
    )
