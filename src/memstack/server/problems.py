"""Problem-style JSON errors (RFC 9457) carrying the typed error's name.

The status of each memstack error is a table, not a chain of ``except`` clauses.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import errors

__all__ = ["STATUS", "install", "problem"]

# Most specific first: the first class in the MRO found here wins.
STATUS: dict[type[errors.MemstackError], int] = {
    errors.InvalidInput: 400,
    errors.NotFound: 404,
    errors.AlreadyExists: 409,
    errors.Conflict: 409,
    errors.NamespaceFull: 409,
    errors.SessionLimitReached: 429,
    errors.LimitReached: 409,
    errors.WaitTimeout: 408,
    errors.NotANumber: 409,
    errors.EngineUnavailable: 503,
    errors.EngineError: 500,
    errors.MemstackError: 500,
}

PROBLEM_MEDIA = "application/problem+json"


def status_of(exc: errors.MemstackError) -> int:
    """The HTTP status of a memstack error."""
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def problem(status: int, title: str, detail: str, **extra: Any) -> JSONResponse:
    """A problem+json response."""
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM_MEDIA)


def install(app: FastAPI) -> None:
    """Register the problem handlers on ``app``."""

    async def on_memstack(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, errors.MemstackError)
        return problem(status_of(exc), type(exc).__name__, str(exc), error=type(exc).__name__)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        issues = [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", ""))} for e in exc.errors()]
        return problem(422, "RequestValidationError", "the request does not match its schema", errors=issues)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        response = problem(exc.status_code, _TITLES.get(exc.status_code, "HTTPError"), str(exc.detail))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    app.add_exception_handler(errors.MemstackError, on_memstack)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)


_TITLES = {401: "Unauthorized", 404: "NotFound", 405: "MethodNotAllowed", 413: "PayloadTooLarge"}
