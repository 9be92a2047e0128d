"""Problem-style JSON errors (RFC 9457) carrying the typed error's name.

The status of each error comes from the one table in :mod:`.error_table`, not from a chain of
``except`` clauses; every detail is scrubbed of internal keys.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import errors
from .error_table import RETRY_AFTER_SECONDS, describe, scrub

__all__ = [
    "PROBLEM_MEDIA",
    "TITLES",
    "ProblemResponse",
    "error_response",
    "install",
    "problem",
    "status_of",
]

PROBLEM_MEDIA = "application/problem+json"

TITLES = {
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


class ProblemResponse(JSONResponse):
    """A problem+json response, rendered ASCII-only so no text can fail to encode."""

    media_type = PROBLEM_MEDIA

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def status_of(exc: BaseException) -> int:
    """The HTTP status of an error (see :data:`memstack.server.error_table.TABLE`)."""
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
