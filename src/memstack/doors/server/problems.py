"""Problem-style JSON errors (RFC 9457) carrying the typed error's name.

The status of each error comes from the one table in :mod:`.error_table`, not from a chain of
``except`` clauses; every detail is scrubbed of internal keys.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ...foundation import errors
from .error_table import RETRY_AFTER_SECONDS, describe, rule_for, scrub

__all__ = [
    "PROBLEM_MEDIA",
    "TITLES",
    "ProblemName",
    "ProblemResponse",
    "error_response",
    "install",
    "problem",
    "problem_names",
    "status_of",
]

PROBLEM_MEDIA = "application/problem+json"

TITLES: Final = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    413: "PayloadTooLarge",
    429: "TooManyRequests",
    503: "ServiceUnavailable",
}
"""The problem title of each plain HTTP error (any other status: ``HTTPError``)."""


# Where the names of plain HTTP errors (and the two names the handlers below give) sit in the
# exception tree, for clients that catch by class: a 503 of the key store is an engine outage.
_HTTP_PARENTS: Final = {
    "BadRequest": "InvalidInput",
    "Unauthorized": "MemstackError",
    "Forbidden": "MemstackError",
    "MethodNotAllowed": "MemstackError",
    "PayloadTooLarge": "InvalidInput",
    "TooManyRequests": "LimitReached",
    "ServiceUnavailable": "EngineUnavailable",
    "HTTPError": "MemstackError",
    "RequestValidationError": "InvalidInput",
    "InternalError": "MemstackError",
}
_OWN_STATUS: Final = {"RequestValidationError": 422, "InternalError": 500}
_HTTP_DOCS: Final = {
    "HTTPError": "Any other plain HTTP error.",
    "RequestValidationError": "A request that does not match its route's schema (422).",
    "InternalError": "An unexpected failure of the server (500); the detail is generic.",
}


@dataclass(frozen=True, slots=True)
class ProblemName:
    """One name a problem's ``error`` (or, for plain HTTP errors, its ``title``) can carry.

    Attributes:
        name: the exception class name (or the HTTP error's title).
        parent: the name it derives from (None for the root, ``MemstackError``).
        status: the HTTP status it is answered with (0 for ``HTTPError``: any other status).
        retry: answered with ``Retry-After``.
        doc: what it means (the first paragraph of its docstring).
    """

    name: str
    parent: str | None
    status: int
    retry: bool
    doc: str


def problem_names() -> tuple[ProblemName, ...]:
    """Every name a problem of this server can carry, parents before children: the exception
    tree of :mod:`memstack.foundation.errors` (in the order of its ``__all__`` within each level), then the
    titles of plain HTTP errors and the names of schema (422) and unexpected (500) failures.
    Clients generate their error classes from this (it is in the OpenAPI document)."""
    classes = [getattr(errors, name) for name in errors.__all__]
    tree = [c for c in classes if isinstance(c, type) and issubclass(c, errors.MemstackError)]
    found: list[ProblemName] = []

    def visit(cls: type[errors.MemstackError], parent: str | None) -> None:
        rule = rule_for(cls)
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n", 1)[0].split())
        found.append(ProblemName(cls.__name__, parent, rule.status, rule.retry, doc))
        for child in tree:
            if cls in child.__bases__:
                visit(child, cls.__name__)

    visit(errors.MemstackError, None)
    known = {p.name for p in found}
    status_of_title = {title: status for status, title in TITLES.items()}
    for name, parent in _HTTP_PARENTS.items():
        if name in known:
            continue
        status = status_of_title.get(name, _OWN_STATUS.get(name, 0))
        doc = _HTTP_DOCS.get(name, f"HTTP {status}: {name}.")
        found.append(ProblemName(name, parent, status, status in (429, 503), doc))
    return tuple(found)


class ProblemResponse(JSONResponse):
    """A problem+json response, rendered ASCII-only so no text can fail to encode."""

    media_type = PROBLEM_MEDIA

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def status_of(exc: BaseException) -> int:
    """The HTTP status of an error (see :data:`memstack.doors.server.error_table.TABLE`)."""
    return describe(exc)[0].status


def problem(status: int, title: str, detail: str, **extra: Any) -> ProblemResponse:
    """A problem+json response; ``detail`` is scrubbed."""
    body = {"type": "about:blank", "title": title, "status": status, "detail": scrub(detail), **extra}
    return ProblemResponse(body, status_code=status)


def error_response(exc: BaseException) -> ProblemResponse:
    """The problem response of any exception, by the one table (with ``Retry-After`` on 503)."""
    rule, name, detail = describe(exc)
    response = problem(rule.status, name, detail, error=name)
    if rule.retry:
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def http_problem(status: int, detail: str, headers: dict[str, str] | None = None) -> ProblemResponse:
    """The problem response of a plain HTTP error (401, 404 of a route, 405, 413)."""
    response = problem(status, TITLES.get(status, "HTTPError"), detail)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def install(app: FastAPI) -> None:
    """Register the problem handlers on ``app``."""

    async def on_memstack(request: Request, exc: Exception) -> ProblemResponse:
        return error_response(exc)

    async def on_validation(request: Request, exc: Exception) -> ProblemResponse:
        assert isinstance(exc, RequestValidationError)
        issues: list[dict[str, Any]] = [
            {"loc": [scrub(str(part)) for part in e.get("loc", ())], "msg": scrub(str(e.get("msg", "")))}
            for e in exc.errors()
        ]
        where = ".".join(issues[0]["loc"]) if issues else "request"
        what = issues[0]["msg"] if issues else "does not match its schema"
        return problem(
            422, "RequestValidationError", f"{where}: {what}", error="RequestValidationError", errors=issues
        )

    async def on_http(request: Request, exc: Exception) -> ProblemResponse:
        assert isinstance(exc, StarletteHTTPException)
        return http_problem(exc.status_code, str(exc.detail), dict(exc.headers or {}))

    app.add_exception_handler(errors.MemstackError, on_memstack)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
