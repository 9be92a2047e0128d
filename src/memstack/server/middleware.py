"""ASGI middleware of the service: the request-body limit (413) and one JSON access-log line per request."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from . import problems

__all__ = ["ASGIApp", "LimitsMiddleware", "Receive", "Scope", "Send"]

access_log = logging.getLogger("memstack.access")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _limits_and_logs(app: ASGIApp, max_body: int) -> ASGIApp:
    """ASGI middleware: refuse bodies over ``max_body`` (413) and write one JSON access-log line."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = {"code": 500}
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_body:
            await _send_413(send, max_body)
            status["code"] = 413
            _log(scope, 413, started)
            return
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > max_body:
                    raise HTTPException(413, f"request body larger than {max_body} bytes")
            return message

        async def logging_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = int(message["status"])
            await send(message)

        try:
            await app(scope, limited_receive, logging_send)
        finally:
            _log(scope, status["code"], started)

    return middleware


async def _send_413(send: Send, max_body: int) -> None:
    body = json.dumps(
        {
            "type": "about:blank",
            "title": "PayloadTooLarge",
            "status": 413,
            "detail": f"request body larger than {max_body} bytes",
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", problems.PROBLEM_MEDIA.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _log(scope: Scope, status: int, started: float) -> None:
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
