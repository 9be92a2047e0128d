"""The search parameters of long-term memory as the doors take them: one pydantic model.

``GET /v1/memories``, ``memstack memories search`` and the ``search_memory`` tool are all built
from :class:`SearchParams`, so their names, types, defaults and limits cannot drift apart. The
library's :meth:`~memstack.tiers.longterm.LongTermMemory.search` takes the same names as keyword
arguments and checks them with :func:`~memstack.tiers.longterm.search_request.search_request`.

| name | type | rule |
|---|---|---|
| ``query`` | text | blank or absent lists the most recently changed entries |
| ``mode`` | ``auto`` / ``bm25`` / ``hybrid`` | ``auto``: hybrid when an embedder is configured |
| ``category`` | text | that category or any ``category/…`` below it |
| ``tags`` | list of text, or one comma-separated text | every tag must be present |
| ``created_after`` / ``created_before`` | ISO-8601 time (UTC without an offset) | inclusive |
| ``metadata`` | object | every key must equal the given JSON value |
| ``limit`` | int, 1 to :data:`MAX_SEARCH_LIMIT` | at most this many hits (default 20) |
| ``min_score`` | number | drop ranked hits whose ``score`` is below it |
| ``filter`` | object | the filter language (:mod:`memstack.search.filters`), ANDed with the above |
| ``offset`` | int, 0 to :data:`~memstack.foundation.limits.MAX_SEARCH_OFFSET` | hits to skip first (paging) |
| ``include_history`` | bool | also superseded entries (default: only current ones) |
| ``include_expired`` | bool | also entries past their ``expires_at`` (audits) |
| ``as_of`` | ISO-8601 time | what was valid then (superseded and expired entries included) |

Kept apart from :mod:`.search_request` so that the library does not import pydantic.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    TypeAdapter,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from ...foundation.limits import MAX_SEARCH_OFFSET

__all__ = ["MAX_SEARCH_LIMIT", "CommaList", "SearchParams", "Tags", "Time", "split_tags", "utc"]

MAX_SEARCH_LIMIT: Final = 1000
"""The largest ``limit`` a door accepts (the library itself has no cap)."""

_DATETIME: Final = TypeAdapter(datetime)


def split_tags(value: object) -> object:
    """A comma-separated text as a list of its trimmed, non-blank parts; anything else as is."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _iso(value: object) -> object:
    # Strict validation takes no text for a time; JSON has no other way to write one.
    if not isinstance(value, str):
        return value
    try:
        return _DATETIME.validate_strings(value)
    except ValueError:
        raise ValueError(f"{value[:80]!r} is not an ISO-8601 time (2026-11-23T20:16:47Z)") from None


def utc(value: datetime | None) -> datetime | None:
    """A time without an offset read as UTC."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


class CommaList:
    """Marks a list of texts that also takes one comma-separated text (the command line's form);
    with a ``description``, it is also the field's JSON schema (a list or a text), saying so."""

    def __init__(self, description: str | None = None) -> None:
        self.description = description

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        if self.description is None:
            return handler(schema)
        either = [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]
        return {"anyOf": either, "description": self.description}


Tags = Annotated[
    list[str] | None,
    CommaList("Tags: a list, or one comma-separated text ('a, b')."),
    BeforeValidator(split_tags),
]
Time = Annotated[
    datetime | None,
    BeforeValidator(_iso),
    AfterValidator(utc),
    WithJsonSchema(
        {"type": "string", "format": "date-time", "description": "ISO-8601; UTC without an offset."}
    ),
]


class SearchParams(BaseModel):
    """The long-term search parameters (module table)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    query: str | None = Field(
        None, max_length=4000, description="Words to search for; blank or absent lists the newest."
    )
    mode: Literal["auto", "bm25", "hybrid"] = Field(
        "auto", description="auto (hybrid when an embedder is configured), bm25 or hybrid."
    )
    category: str | None = Field(
        None, max_length=512, description="Only this category and its sub-categories."
    )
    tags: Tags = Field(None, description="Only memories with every one of these tags.")
    created_after: Time = Field(None, description="Only memories created at or after this time.")
    created_before: Time = Field(None, description="Only memories created at or before this time.")
    metadata: dict[str, Any] | None = Field(
        None, description='Only memories whose metadata has these values ({"k": 1}).'
    )
    limit: int = Field(20, ge=1, le=MAX_SEARCH_LIMIT, description=f"Most hits (1-{MAX_SEARCH_LIMIT}).")
    min_score: float | None = Field(None, description="Drop ranked hits scoring below this.")
    filter: dict[str, Any] | None = Field(
        None,
        description='The filter language, ANDed with the above: {"field": value} or '
        '{"field": {"$gte": 3}} ($eq $ne $gt $gte $lt $lte $in $nin $contains $exists; $and $or $not).',
    )
    offset: int = Field(
        0, ge=0, le=MAX_SEARCH_OFFSET, description=f"Hits to skip first, for paging (0-{MAX_SEARCH_OFFSET})."
    )

    include_history: bool = Field(
        False, description="Also superseded entries (valid_to passed); default: only current ones."
    )
    include_expired: bool = Field(False, description="Also entries past their expires_at (audits).")
    as_of: Time = Field(None, description="Only what was valid at this time (the past's view).")

    def options(self) -> dict[str, Any]:
        """The parameters as keyword arguments of :meth:`~memstack.tiers.longterm.LongTermMemory.search`."""
        return {name: getattr(self, name) for name in SearchParams.model_fields}
