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
| ``limit`` | int >= 1 | how many hits at most (the library also accepts RockBot's ``max_results``) |
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
from dataclasses import Field, dataclass, field, fields
from datetime import datetime
from functools import cache
from typing import Any, Final, Literal, get_args

from ...foundation.errors import InvalidFilter, InvalidValue
from ...foundation.jsontext import loads
from ...foundation.limits import MAX_SEARCH_OFFSET, check_text, encode_json, short_repr
from ...search.filters import Filter, combine, parse_filter
from .query import LONG_TERM_FIELDS, Filters
from .validate import check_tags, check_time
from .validity import View, check_view

__all__ = [
    "MAX_OFFSET",
    "MAX_SEARCH_LIMIT",
    "MODES",
    "Mode",
    "SearchRequest",
    "filter_from_text",
    "metadata_from_text",
    "metadata_pairs",
    "search_request",
]

Mode = Literal["auto", "bm25", "hybrid"]
MODES: Final = get_args(Mode)
"""Search modes, in the order surfaces list them."""
MAX_SEARCH_LIMIT: Final = 1000
"""The largest ``limit`` a door accepts (the library itself has no cap)."""
MAX_OFFSET: Final = MAX_SEARCH_OFFSET
"""The deepest page a search reaches: ``offset`` at most this (``limits.MAX_SEARCH_OFFSET``)."""


def _doc(doc: str, **rules: object) -> dict[str, object]:
    """A parameter's description (every door's help text) and the bounds a door checks before the
    request is built (``max_length``, ``ge``, ``le``), as the field's metadata."""
    return {"doc": doc, "rules": rules}


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchRequest:
    """The long-term search parameters, declared once and checked once (module table).

    Built by :meth:`~memstack.tiers.longterm.LongTermMemory.search` from its keywords and by every door
    from its request (:class:`~memstack.tiers.longterm.search_params.SearchParams` is derived from these
    fields: names, defaults, descriptions, bounds). Building it checks every parameter; the checked
    forms are ``filters``, ``where`` (the parameters' filters and ``filter`` as one filter) and ``view``.

    Raises:
        InvalidValue: a parameter breaking its rule (the message names it).
        InvalidFilter: a ``filter`` breaking the filter language.
    """

    query: str | None = field(
        default=None, metadata=_doc("Words to search for; blank or absent lists the newest.", max_length=4000)
    )
    mode: Mode = field(
        default="auto", metadata=_doc("auto (hybrid when an embedder is configured), bm25 or hybrid.")
    )
    category: str | None = field(
        default=None, metadata=_doc("Only this category and its sub-categories.", max_length=512)
    )
    tags: Iterable[str] | str | None = field(
        default=None, metadata=_doc("Only memories with every one of these tags.")
    )
    created_after: datetime | float | None = field(
        default=None, metadata=_doc("Only memories created at or after this time.")
    )
    created_before: datetime | float | None = field(
        default=None, metadata=_doc("Only memories created at or before this time.")
    )
    metadata: Mapping[str, object] | None = field(
        default=None, metadata=_doc('Only memories whose metadata has these values ({"k": 1}).')
    )
    limit: int = field(
        default=20, metadata=_doc(f"Most hits (1-{MAX_SEARCH_LIMIT}).", ge=1, le=MAX_SEARCH_LIMIT)
    )
    min_score: float | None = field(default=None, metadata=_doc("Drop ranked hits scoring below this."))
    filter: Mapping[str, object] | None = field(
        default=None,
        metadata=_doc(
            'The filter language, ANDed with the above: {"field": value} or '
            '{"field": {"$gte": 3}} ($eq $ne $gt $gte $lt $lte $in $nin $contains $exists; $and $or $not).'
        ),
    )
    offset: int = field(
        default=0, metadata=_doc(f"Hits to skip first, for paging (0-{MAX_OFFSET}).", ge=0, le=MAX_OFFSET)
    )
    include_history: bool = field(
        default=False, metadata=_doc("Also superseded entries (valid_to passed); default: only current ones.")
    )
    include_expired: bool = field(
        default=False, metadata=_doc("Also entries past their expires_at (audits).")
    )
    as_of: datetime | float | None = field(
        default=None, metadata=_doc("Only what was valid at this time (the past's view).")
    )
    limit_name: str = field(default="limit", repr=False, compare=False, metadata={"internal": True})
    filters: Filters = field(init=False, repr=False, metadata={"internal": True})
    where: Filter | None = field(init=False, repr=False, metadata={"internal": True})
    view: View = field(init=False, repr=False, metadata={"internal": True})

    def __post_init__(self) -> None:
        self._check_scalars()
        filters = Filters(
            category=self.category.strip() if self.category is not None and self.category.strip() else None,
            tags=check_tags(self.tags),
            created_after=check_time(self.created_after, "created_after"),
            created_before=check_time(self.created_before, "created_before"),
            metadata=metadata_pairs(self.metadata),
        )
        view = check_view(self.include_history, self.include_expired, self.as_of)
        where = combine(filters.to_node(), parse_filter(self.filter, LONG_TERM_FIELDS))
        object.__setattr__(self, "filters", filters)
        object.__setattr__(self, "view", view)
        object.__setattr__(self, "where", where)
        if self.min_score is not None:
            object.__setattr__(self, "min_score", float(self.min_score))

    def _check_scalars(self) -> None:
        if self.query is not None:
            check_text(self.query, "query")
        if not isinstance(self.mode, str) or self.mode not in MODES:
            raise InvalidValue(f"mode {short_repr(self.mode)}: must be one of {', '.join(MODES)}")
        if self.category is not None:
            check_text(self.category, "category")
        limit, offset, min_score = self.limit, self.offset, self.min_score
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidValue(f"{self.limit_name} {short_repr(limit)}: must be an int >= 1")
        if min_score is not None and (
            isinstance(min_score, bool) or not isinstance(min_score, int | float) or min_score != min_score
        ):
            raise InvalidValue(f"min_score {short_repr(min_score)}: must be a number or None")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
            raise InvalidValue(f"offset {short_repr(offset)}: must be an int from 0 to {MAX_OFFSET}")

    @property
    def ranked(self) -> bool:
        """True when there is a non-blank query to rank by (else a recency listing)."""
        return self.query is not None and bool(self.query.strip())

    @classmethod
    def parameters(cls) -> tuple[Field[Any], ...]:
        """The public parameters in their declared order (the doors' schemas are built from them)."""
        return tuple(f for f in fields(cls) if not f.metadata.get("internal"))


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


def search_request(query: str | None = None, **options: Any) -> SearchRequest:
    """``SearchRequest(query=query, **options)``, an unknown keyword refused as a bad value.

    Raises:
        InvalidValue: a parameter breaking its rule in the module table, or an unknown one.
        InvalidFilter: a ``filter`` breaking the filter language.
    """
    known = _known()
    unknown = sorted(set(options) - known)
    if unknown:
        raise InvalidValue(
            f"search parameter {short_repr(unknown[0])}: unknown; known: {', '.join(sorted(known))}"
        )
    return SearchRequest(query=query, **options)


@cache
def _known() -> frozenset[str]:
    """The keywords a request takes (``fields()`` walks the class: ~2 µs a search)."""
    return frozenset(f.name for f in fields(SearchRequest) if f.init)
