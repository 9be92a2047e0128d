"""What every router shares: the problem model, documented error responses, pagination."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ..problems import PROBLEM_MEDIA, problem_names

__all__ = ["ERRORS", "Page", "Problem", "client_route", "page_of"]

_Route = TypeVar("_Route", bound=Callable[..., Any])


def _name_the_errors(schema: dict[str, Any]) -> None:
    """The schema's ``error`` lists every name it can carry; ``x-memstack-errors`` draws their
    tree (name, parent, status, retry, doc), from which clients generate their error classes."""
    names = problem_names()
    schema["properties"]["error"] = {
        "anyOf": [{"type": "string", "enum": [n.name for n in names]}, {"type": "null"}],
        "description": "The memstack error class name (absent on plain HTTP errors: see title).",
    }
    schema["x-memstack-errors"] = [
        {"name": n.name, "parent": n.parent, "status": n.status, "retry": n.retry, "doc": n.doc}
        for n in names
    ]


class Problem(BaseModel):
    """An RFC 9457 problem; ``error`` is the memstack error class name when there is one."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_name_the_errors)

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    error: str | None = None


def _problem(description: str) -> dict[str, Any]:
    return {"model": Problem, "description": description, "content": {PROBLEM_MEDIA: {}}}


# Every route may answer these (documented so clients and schemathesis know the shapes); the
# statuses come from the one table in memstack.doors.server.error_table.
ERRORS: dict[int | str, dict[str, Any]] = {
    400: _problem("Invalid input: the detail names the field or value and the rule."),
    401: _problem("A valid API key is required."),
    403: _problem("The API key may not do this (key management needs an admin key)."),
    404: _problem("Not found (also for another tenant's ids, and an unknown tool)."),
    408: _problem("A long-poll wait ended before the key was written."),
    409: _problem("Conflict: exists already, version moved, not a number."),
    413: _problem("Request body too large."),
    422: _problem("The request does not match its schema."),
    429: _problem(
        "Too many requests: a named limit was reached (session cap, full working-memory namespace), "
        "this client address sent too many failed authentications (throttled), or the API key "
        "passed its per-minute rate; the last two carry Retry-After."
    ),
    500: _problem("An unexpected failure; the detail is generic, the server log has the trace."),
    502: _problem("The embedding backend failed."),
    503: _problem("The storage engine or key store is unavailable or full (see Retry-After)."),
}


class Page(BaseModel):
    """One page of a growing list; pass ``next_cursor`` back as ``cursor`` for the next page."""

    items: list[Any]
    next_cursor: str | None = Field(None, description="Cursor of the next page; null on the last page.")


def page_of(sorted_ids: list[str], cursor: str | None, limit: int) -> tuple[list[str], str | None]:
    """Keyset pagination over sorted ids: those after ``cursor``, at most ``limit``."""
    start = 0
    if cursor is not None:
        import bisect

        start = bisect.bisect_right(sorted_ids, cursor)
    chunk = sorted_ids[start : start + limit]
    more = start + limit < len(sorted_ids)
    return chunk, (chunk[-1] if more and chunk else None)


def client_route(
    verb: Callable[..., Callable[[_Route], _Route]], path: str, operation_id: str, client: str, **options: Any
) -> Callable[[_Route], _Route]:
    """``verb(path, …)`` (``router.get``, ``router.post``) for a route written by hand, with its
    stable operation id and the TypeScript client method that calls it (``x-memstack-client``):
    the registry's routes take both from their operation (:mod:`.ops`)."""
    extra = {"x-memstack-client": client, **options.pop("openapi_extra", {})}
    return verb(path, operation_id=operation_id, openapi_extra=extra, **options)
