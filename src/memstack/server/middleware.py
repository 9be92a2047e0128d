"""ASGI middleware of the service: the request-body limit (413), the body value check (400), the
last-resort error answer (500 without exception text) and one JSON access-log line per request."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ..errors import InvalidValue
from . import problems
from .bodies import check_body, is_json

__all__ = ["ASGIApp", "LimitsMiddleware", "Receive", "Scope", "Send"]

access_log = logging.getLogger("memstack.access")
_log = logging.getLogger("memstack.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Streaming endpoints whose bodies are not buffered here (MCP checks tool arguments itself).
_STREAMED = ("/mcp",)


class _TooLarge(Exception):
    pass


async def _read_body(receive: Receive, max_body: int) -> bytes:
    chunks, seen = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        seen += len(chunk)
        if seen > max_body:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _limits_and_logs(app: ASGIApp, max_body: int) -> ASGIApp:
    """ASGI middleware: 413 past ``max_body``, 400 for a body breaking a value limit, 500 for
    anything that escaped the error handlers; one JSON access-log line per request."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = {"code": 500, "started": 0}

        async def logging_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"], status["started"] = int(message["status"]), 1
            await send(message)

        try:
            headers = dict(scope.get("headers") or [])
            declared = headers.get(b"content-length")
            if declared is not None and declared.isdigit() and int(declared) > max_body:
                raise _TooLarge
            if str(scope.get("path", "")).startswith(_STREAMED):
                receive = _limited(receive, max_body)
            elif scope.get("method") in ("POST", "PUT", "PATCH", "DELETE"):
                body = await _read_body(receive, max_body)
                if is_json(headers.get(b"content-type", b"").decode("latin-1")):
                    check_body(body)
                receive = _replay(body, receive)
            await app(scope, receive, logging_send)
        except _TooLarge:
            if status["started"]:
                raise
            await _answer(
                problems.http_problem(413, f"request body larger than {max_body} bytes"), scope, logging_send
            )
        except InvalidValue as exc:
            await _answer(problems.error_response(exc), scope, logging_send)
        except Exception as exc:  # the last resort: a generic 500, the trace only in the server log
            _log.error("unhandled error on %s %s", scope.get("method"), scope.get("path"), exc_info=exc)
            if not status["started"]:
                await _answer(problems.error_response(exc), scope, logging_send)
        finally:
            _log_line(scope, status["code"], started)

    return middleware


def _limited(receive: Receive, max_body: int) -> Receive:
    seen = 0

    async def limited() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > max_body:
                raise _TooLarge
        return message

    return limited


async def _answer(response: problems.ProblemResponse, scope: Scope, send: Send) -> None:
    async def nothing() -> Message:
        return {"type": "http.disconnect"}

    await response(scope, nothing, send)


def _log_line(scope: Scope, status: int, started: float) -> None:
    if access_log.isEnabledFor(logging.INFO):
        client = scope.get("client") or ("-", 0)
        access_log.info(
            json.dumps(
                {
                    "method": scope.get("method"),
                    "path": scope.get("path"),
                    "status": status,
                    "ms": round((time.perf_counter() - started) * 1000, 3),
                    "client": client[0],
                }
            )
        )


class LimitsMiddleware:
    """Starlette-style class wrapper around :func:`_limits_and_logs`."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self._app = _limits_and_logs(app, max_body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)
