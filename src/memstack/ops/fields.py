"""Fields several operations share, each with its one rule and description.

A field's constraints here are the doors' rules (lengths, ranges); the tiers check their own rules
again (id syntax, category paths), so a value the doors pass may still be refused with a 400.
:func:`ruled` makes a field that shows a tier's rule without checking it (the tier's request
checks it once, with one message on every door).
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from pydantic import BeforeValidator, Field, WithJsonSchema
from pydantic_core import PydanticUndefined

from ..foundation.rules import Rule
from ..tiers.longterm.search_params import CommaList, Tags, Time, split_tags

__all__ = [
    "MAX_PAGE",
    "Board",
    "ConversationId",
    "Cursor",
    "Ids",
    "Json",
    "Metadata",
    "PageLimit",
    "Scope",
    "SessionId",
    "Subject",
    "Tags",
    "Time",
    "ruled",
]

MAX_PAGE: Final = 1000
"""The most items one page of a listing holds, on every door."""

SessionId = Annotated[str, Field(max_length=128, description="A session id: 1-128 of A-Z a-z 0-9 _ -.")]
ConversationId = Annotated[str, Field(max_length=128, description="A conversation id.")]
Scope = Annotated[str, Field(max_length=128, description="Whose long-term memories: a user or an agent.")]
Board = Annotated[str, Field(max_length=128, description="A shared board: 1-128 of A-Z a-z 0-9 _ . -.")]
Subject = Annotated[str | None, Field(max_length=256, description="The end user this is about (for forget).")]
Cursor = Annotated[
    str | None,
    Field(max_length=512, description="Where the page starts: the next_cursor of the previous page."),
]
PageLimit = Annotated[int, Field(ge=1, le=MAX_PAGE, description=f"Most items in the page (1-{MAX_PAGE}).")]
Json = Annotated[Any, Field(description="Any JSON value.")]

Metadata = Annotated[dict[str, Any] | None, Field(description="Any JSON object kept with it.")]

Ids = Annotated[
    list[str] | None,
    CommaList(),
    BeforeValidator(split_tags),
    WithJsonSchema(
        {
            "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}],
            "description": "Memory ids: a list, or one comma-separated text ('a1, a2').",
        }
    ),
]


def ruled(rule: Rule, default: Any = PydanticUndefined, **door: Any) -> Any:
    """A request field showing a tier's ``rule`` (its description and JSON-schema bounds) and
    checking only ``door``'s own bounds (a page's size: what the library has no rule for)."""
    return Field(default, description=rule.doc, json_schema_extra=dict(rule.json), **door)
