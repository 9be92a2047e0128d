"""The search parameters of long-term memory as the doors take them: one pydantic model, derived.

The parameters are declared once, as the fields of
:class:`~memstack.tiers.longterm.search_request.SearchRequest` (name, default, description, bounds);
:class:`SearchParams` is generated from them with their JSON types. ``GET /v1/memories``,
``memstack memories search`` and the ``search_memory`` tool are all built from it, so their names,
types, defaults and limits cannot drift from the library's.

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

from dataclasses import Field as DataclassField
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Final

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    TypeAdapter,
    WithJsonSchema,
    create_model,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from .search_request import MAX_SEARCH_LIMIT, Mode, SearchRequest

__all__ = ["MAX_SEARCH_LIMIT", "CommaList", "SearchParams", "Tags", "Time", "split_tags", "utc"]

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


class _Params(BaseModel):
    """What every door's search request shares: the fields come from
    :class:`~memstack.tiers.longterm.search_request.SearchRequest`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    def options(self) -> dict[str, Any]:
        """The parameters as keyword arguments of :meth:`~memstack.tiers.longterm.LongTermMemory.search`."""
        return {name: getattr(self, name) for name in _NAMES}


_WIRE: Final[dict[str, Any]] = {
    # the library's types (annotations of SearchRequest) as JSON carries them
    "str | None": str | None,
    "Mode": Mode,
    "Iterable[str] | str | None": Tags,
    "datetime | float | None": Time,
    "Mapping[str, object] | None": dict[str, Any] | None,
    "int": int,
    "float | None": float | None,
    "bool": bool,
}
_NAMES: Final = tuple(f.name for f in SearchRequest.parameters())


def _wire_field(param: DataclassField[Any]) -> tuple[Any, Any]:
    rules = dict(param.metadata["rules"])
    return _WIRE[str(param.type)], Field(param.default, description=param.metadata["doc"], **rules)


if TYPE_CHECKING:

    class SearchParams(_Params):
        """The long-term search parameters (module table)."""

else:
    SearchParams = create_model(
        "SearchParams",
        __base__=_Params,
        __doc__="The long-term search parameters (module table).",
        __module__=__name__,
        **{param.name: _wire_field(param) for param in SearchRequest.parameters()},
    )
