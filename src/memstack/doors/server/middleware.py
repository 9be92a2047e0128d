"""ASGI middleware of the service, in the order a request meets it: the entry check (400 for a
path, query or header that is not UTF-8: :mod:`.entry`), the failed-authentication throttle (429:
:mod:`.throttle`), the key check of a request that has a body or a stream (401 before a byte
of the body is read: an anonymous client never makes the server hold its body), the request-body
limit (413, counted as the body streams in), the body value check (400), the last-resort
error answer (500 without exception text) and one JSON access-log line per request, with route
templates and keyed hashes instead of ids (:mod:`.access_log`). Every response carries
``X-Content-Type-Options: nosniff`` and, unless it sets its own, a ``Content-Security-Policy``
that allows nothing and no framing (API answers are data, never pages)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

import anyio
from starlette.exceptions import HTTPException

from ...foundation.errors import InvalidInput
from . import problems
from .access_log import AccessLog, method_of, route_of
from .auth import Authenticator
from .bodies import check_body, is_json
from .entry import entry_problem
from .throttle import FailureThrottle, client_of, is_public

__all__ = ["API_CSP", "ASGIApp", "Receive", "Scope", "Send", "limits_and_logs"]

_log = logging.getLogger("memstack.doors.server")

API_CSP: Final = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
"""The policy of every response that does not set its own (pages set theirs)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Streaming endpoints whose bodies are not buffered here (MCP checks tool arguments itself).
_STREAMED = ("/mcp",)
_BODY_METHODS: Final = ("POST", "PUT", "PATCH", "DELETE")


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


def _secure_headers(message: Message) -> None:
    """Add ``nosniff`` and, when the response has none, the API's policy to a response start."""
    headers = list(message.get("headers") or [])
    names = {name.lower() for name, _ in headers}
    if b"content-security-policy" not in names:
        headers.append((b"content-security-policy", API_CSP.encode()))
    if b"x-content-type-options" not in names:
        headers.append((b"x-content-type-options", b"nosniff"))
    message["headers"] = headers


def limits_and_logs(
    app: ASGIApp,
    max_body: int,
    throttle: FailureThrottle | None = None,
    access: AccessLog | None = None,
    authenticator: Authenticator | None = None,
) -> ASGIApp:
    """``app`` behind the body limit, the failure throttle and the access log (see the module
    docstring): a middleware factory for ``app.add_middleware``."""
    access_log = access or AccessLog()

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = {"code": 500, "started": 0}

        async def logging_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"], status["started"] = int(message["status"]), 1
                _secure_headers(message)
            await send(message)

        guarded = throttle is not None and not is_public(str(scope.get("path", "")))
        client = client_of(str((scope.get("client") or ("-", 0))[0])) if guarded else ""
        try:
            problem = entry_problem(scope)
            if problem is not None:
                raise InvalidInput(problem)
            refused = await _early_refusal(scope, throttle if guarded else None, client, authenticator)
            if refused is not None:
                await _answer(refused, scope, logging_send)
                return
            await app(scope, await _bounded(scope, receive, max_body), logging_send)
        except _TooLarge:
            if status["started"]:
                raise
            await _answer(
                problems.http_problem(413, f"request body larger than {max_body} bytes"), scope, logging_send
            )
        except InvalidInput as exc:  # a value (InvalidValue) or the request's text (entry check)
            await _answer(problems.error_response(exc), scope, logging_send)
        except Exception as exc:  # the last resort: a generic 500, the trace only in the server log
            _log.error("unhandled error on %s %s", method_of(scope), route_of(scope), exc_info=exc)
            if not status["started"]:
                await _answer(problems.error_response(exc), scope, logging_send)
        finally:
            # A failed authentication presented a credential: a request without one guesses nothing.
            if guarded and throttle is not None and status["code"] == 401 and _presents_credentials(scope):
                _failed_authentication(throttle, client)
            access_log.write(scope, status["code"], (time.perf_counter() - started) * 1000)

    return middleware


async def _early_refusal(
    scope: Scope, throttle: FailureThrottle | None, client: str, authenticator: Authenticator | None
) -> problems.ProblemResponse | None:
    """What a request is answered before its body is read: 429 while its client is throttled, the
    401 of a keyed route's missing or unknown key (a body is never read for a stranger); None to go on."""
    if throttle is not None:
        wait = throttle.retry_after(client)
        if wait:
            return _throttled(wait)
    path = str(scope.get("path", ""))
    if authenticator is None or authenticator.mode != "keys" or is_public(path):
        return None
    if not (path.startswith(_STREAMED) or scope.get("method") in _BODY_METHODS):
        return None
    headers = dict(scope.get("headers") or [])
    return await _key_refusal(authenticator, headers.get(b"authorization"))


async def _bounded(scope: Scope, receive: Receive, max_body: int) -> Receive:
    """``receive`` held to ``max_body`` bytes: a streamed route's counted as it is read, any other
    write's read at once (a JSON body checked) and replayed.

    Raises:
        _TooLarge: the declared or the read body is larger.
        InvalidInput: a JSON body breaking :mod:`memstack.foundation.limits`.
    """
    headers = dict(scope.get("headers") or [])
    declared = headers.get(b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body:
        raise _TooLarge
    if str(scope.get("path", "")).startswith(_STREAMED):
        return _limited(receive, max_body)
    if scope.get("method") not in _BODY_METHODS:
        return receive
    body = await _read_body(receive, max_body)
    if is_json(headers.get(b"content-type", b"").decode("latin-1")):
        check_body(body)
    return _replay(body, receive)


def _failed_authentication(throttle: FailureThrottle, client: str) -> None:
    """Count a failed authentication that presented a credential (one without guesses nothing);
    the one that exhausts the client's allowance is logged."""
    if throttle.failed(client):
        _log.warning(
            "client %s failed to authenticate %d times: refused with 429 until its allowance "
            "comes back (%g a minute)",
            client,
            throttle.settings.burst,
            throttle.settings.per_minute,
        )


async def _key_refusal(auth: Authenticator, authorization: bytes | None) -> problems.ProblemResponse | None:
    """The 401 (or 503) of a request whose key is missing or unknown, or None: checked before its
    body is read. Only the key's existence is looked at (one engine read, none without a key);
    its rate and tenant are checked by the route, once."""
    text = authorization.decode("latin-1") if authorization is not None else None
    try:
        if text is None or not text.strip():
            auth.known(None)  # no key: refused without an engine read
        else:
            await anyio.to_thread.run_sync(auth.known, text)
    except HTTPException as exc:
        return problems.http_problem(exc.status_code, str(exc.detail), dict(exc.headers or {}))
    return None


def _presents_credentials(scope: Scope) -> bool:
    return any(name.lower() == b"authorization" for name, _ in scope.get("headers") or ())


def _throttled(seconds: int) -> problems.ProblemResponse:
    return problems.http_problem(
        429,
        f"too many failed authentications from this address; retry in {seconds} s",
        {"Retry-After": str(seconds)},
    )


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
