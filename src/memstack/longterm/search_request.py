"""The one set of search parameters every surface takes, checked once.

| name | type | meaning |
|---|---|---|
| ``query`` | text or None | what to look for; blank or None lists the most recently changed entries |
| ``mode`` | ``auto`` / ``bm25`` / ``hybrid`` | ``auto``: hybrid when an embedder is configured, else BM25 |
| ``category`` | text | exact category or any ``category/…`` below it (case-insensitive) |
| ``tags`` | list of text (or comma-separated) | every tag must be present (case-insensitive) |
| ``created_after`` / ``created_before`` | time | inclusive creation-time bounds |
| ``metadata`` | object | every top-level key must equal the given JSON value |
| ``limit`` | int >= 1 | how many hits at most (the library also accepts the seed's ``max_results``) |
| ``min_score`` | number | drop ranked hits whose final score is below it |

The library, the CLI, HTTP, the MCP tools and the adapters use these names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from .._jsontext import loads
from ..errors import InvalidValue
from ..limits import check_text, encode_json, short_repr
from .query import Filters
from .validate import check_tags, check_time

__all__ = ["MODES", "SearchRequest", "metadata_from_text", "metadata_pairs", "search_request"]

MODES: Final = ("auto", "bm25", "hybrid")
"""Search modes, in the order surfaces list them."""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A checked search: what to rank, how, under which filters, and how many to keep."""

    query: str | None
    mode: str
    filters: Filters
    limit: int
    min_score: float | None

    @property
    def ranked(self) -> bool:
        """True when there is a non-blank query to rank by (else a recency listing)."""
        return self.query is not None and bool(self.query.strip())


def metadata_pairs(metadata: object) -> tuple[tuple[str, str], ...]:
    """``metadata`` as sorted ``(key, canonical JSON of the value)`` pairs; None gives ``()``.

    Values compare by their canonical JSON, so ``1`` and ``true`` (equal in Python) differ.

    Raises:
        InvalidValue: not a mapping with string keys, or a value that is not JSON within
            :mod:`memstack.limits` (the message names ``metadata['key']``).
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

    The text is read by :func:`memstack._jsontext.loads`: nesting past :data:`memstack.limits.MAX_DEPTH`
    (measured before parsing, so never a ``RecursionError``), lone surrogates, ``NaN`` and
    over-long integers are refused like any other value.

    Raises:
        InvalidValue: not JSON, JSON breaking a value limit, or JSON that is not an object
            (names ``metadata``).
    """
    if text is None or not text.strip():
        return None
    value = loads(text, "metadata")
    if not isinstance(value, dict):
        raise InvalidValue(f"metadata {short_repr(text)}: must be a JSON object of key to value")
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
) -> SearchRequest:
    """Check every parameter and build the request (``limit_name`` names ``limit`` in errors).

    Raises:
        InvalidValue: a parameter breaking its rule in the module table (the message names it).
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
    filters = Filters(
        category=category.strip() if category is not None and category.strip() else None,
        tags=check_tags(tags),
        created_after=check_time(created_after, "created_after"),
        created_before=check_time(created_before, "created_before"),
        metadata=metadata_pairs(metadata),
    )
    return SearchRequest(query, mode, filters, limit, None if min_score is None else float(min_score))
