"""Pages of ids: every tier's listing (sessions, conversations, scopes, namespaces, boards) pages
the same way, by keyset over the sorted ids."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from pydantic import Field
from typing_extensions import TypedDict

from .fields import Cursor, PageLimit
from .spec import Request

__all__ = ["Page", "PageRequest", "page_of"]


class Page(TypedDict):
    """One page of ids, sorted; pass ``next_cursor`` back as ``cursor`` for the next one."""

    items: list[str]
    next_cursor: str | None


class PageRequest(Request):
    """Which page of a listing."""

    cursor: Cursor = None
    limit: PageLimit = Field(100)


def page_of(sorted_ids: Sequence[str], request: PageRequest) -> Page:
    """The ids after ``request.cursor``, at most ``request.limit`` of them."""
    start = 0 if request.cursor is None else bisect.bisect_right(sorted_ids, request.cursor)
    chunk = list(sorted_ids[start : start + request.limit])
    more = start + request.limit < len(sorted_ids)
    return {"items": chunk, "next_cursor": chunk[-1] if more and chunk else None}
