"""The HTTP plumbing shared by the OpenAI-compatible clients (embeddings, chat completions).

One POST of a JSON body with a bearer token, retried with exponential backoff on what is safe to
retry: connection errors, timeouts, HTTP 429 and 5xx (``Retry-After`` is honoured, capped). Any
other HTTP error, or a reply that is not JSON, raises the caller's error class at once. The whole
call, retries included, ends at its deadline, and a reply past the size cap is refused as it is
read. Error texts quote the server through the one redaction rule (a server may echo the key).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from ..foundation.errors import InvalidConfiguration, MemstackError
from ..foundation.redact import redact, redact_url
from ._proxy import route_of

__all__ = [
    "DEFAULT_DEADLINE",
    "MAX_REPLY_BYTES",
    "MAX_RETRY_AFTER",
    "check_client",
    "post_json",
    "retry_after",
]

log = logging.getLogger("memstack.llm")

MAX_RETRY_AFTER: Final = 30.0
"""A server's ``Retry-After`` is honoured up to this many seconds."""
DEFAULT_DEADLINE: Final = 180.0
"""Longest whole model call (every attempt and backoff) unless the client sets its own."""
MAX_REPLY_BYTES: Final = 32 * 1024 * 1024
"""Largest model reply read unless the client sets its own (a completion or a batch of vectors
is far smaller)."""
_PIECE: Final = 64 * 1024


def check_client(base_url: object, model: object, timeout: float, retries: object, backoff: float) -> None:
    """The settings every OpenAI-compatible client shares (chat, embeddings).

    Raises:
        InvalidConfiguration: a base URL that is not http(s), a blank model, a timeout that is not
            > 0, retries that are not an int >= 0, a negative backoff.
    """
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        shown = redact_url(base_url) if isinstance(base_url, str) else base_url
        raise InvalidConfiguration(f"base_url={shown!r} must start with http:// or https://")
    if not isinstance(model, str) or not model:
        raise InvalidConfiguration(f"model={model!r} must be a non-empty string")
    if not timeout > 0:
        raise InvalidConfiguration(f"timeout={timeout!r} must be > 0 seconds")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise InvalidConfiguration(f"retries={retries!r} must be an int >= 0")
    if not backoff >= 0:
        raise InvalidConfiguration(f"backoff={backoff!r} must be >= 0 seconds")


def retry_after(value: str | None) -> float:
    """Seconds asked by a ``Retry-After`` header, clamped to ``[0, MAX_RETRY_AFTER]`` (0 if unreadable)."""
    try:
        return min(max(float(value or 0), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        return 0.0


class _Refused(Exception):
    """An HTTP error status: its code, ``Retry-After`` and the first bytes of its body."""

    def __init__(self, code: int, retry: str | None, detail: str) -> None:
        super().__init__(f"HTTP {code}: {detail}")
        self.code, self.retry = code, retry


class _TooLarge(Exception):
    pass


class _Call:
    """One POST bounded as a whole: a watchdog shuts the socket down at the deadline, however
    slowly the server trickles its reply (a per-read timeout never ends a byte every few seconds),
    and the reply is read in pieces against ``max_reply`` bytes (a huge reply is refused, never
    held)."""

    def __init__(self, url: str, seconds: float, timeout: float, max_reply: int) -> None:
        self.route = route_of(url)
        self.conn = self.route.connect(min(timeout, seconds))
        self.target = self.route.target
        self.max_reply = max_reply
        self.expired = False
        self._watchdog = threading.Timer(seconds, self._cut)
        self._watchdog.daemon = True

    def _cut(self) -> None:
        self.expired = True
        sock = self.conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def post(self, body: bytes, headers: dict[str, str]) -> bytes:
        self._watchdog.start()
        try:
            self.conn.request("POST", self.target, body, self.route.request_headers(headers))
            response = self.conn.getresponse()
            if response.status >= 400:
                detail = response.read(300).decode("utf-8", "replace")
                raise _Refused(response.status, response.getheader("Retry-After"), detail)
            declared = response.getheader("Content-Length") or ""
            if declared.isdigit() and int(declared) > self.max_reply:
                raise _TooLarge
            chunks, seen = [], 0
            while chunk := response.read1(_PIECE):
                seen += len(chunk)
                if seen > self.max_reply:
                    raise _TooLarge
                chunks.append(chunk)
            if self.expired:
                raise TimeoutError("cut at the whole-call deadline")
            return b"".join(chunks)
        except (OSError, http.client.HTTPException):
            if self.expired:
                raise TimeoutError("cut at the whole-call deadline") from None
            raise
        finally:
            self._watchdog.cancel()
            self.conn.close()


def post_json(
    url: str,
    body: bytes,
    *,
    api_key: str | None,
    timeout: float,
    retries: int,
    backoff: float,
    error: type[MemstackError],
    what: str = "request",
    sleep: Callable[[float], None] = time.sleep,
    deadline: float = DEFAULT_DEADLINE,
    max_reply: int = MAX_REPLY_BYTES,
) -> Any:
    """POST ``body`` (JSON bytes) to ``url`` and return the decoded JSON reply.

    ``timeout`` bounds each wait for the server; ``deadline`` bounds the whole call, retries
    and backoff included; a reply over ``max_reply`` bytes is refused while it is read.

    Raises:
        error: the server refused the request (4xx other than 429), sent something that is not
            JSON or too large, or every attempt failed (unreachable, timed out, 429, 5xx), or the
            deadline passed.
    """
    shown = redact_url(url)  # what errors and logs name: the URL without credentials
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    problem = ""
    ends = time.monotonic() + deadline
    for attempt in range(retries + 1):
        delay = backoff * (2**attempt)
        left = ends - time.monotonic()
        if left <= 0:
            problem = f"the whole-call deadline of {deadline:g} s passed"
            break
        try:
            return json.loads(_Call(url, left, timeout, max_reply).post(body, headers))
        except _Refused as exc:
            problem = redact(str(exc))
            if exc.code != 429 and exc.code < 500:
                raise error(f"{shown} refused the request: {problem}") from None
            delay = max(delay, retry_after(exc.retry))
        except _TooLarge:
            raise error(f"{shown} sent a reply larger than {max_reply} bytes (refused)") from None
        except (TimeoutError, OSError, http.client.HTTPException) as exc:
            problem = redact(f"{type(exc).__name__}: {exc}")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise error(f"{shown} sent a reply that is not JSON: {exc}") from exc
        except (RecursionError, ValueError) as exc:  # nested past the parser's stack, or an int too long
            raise error(f"{shown} sent a reply JSON cannot read ({type(exc).__name__})") from None
        if attempt < retries:
            delay = min(delay, max(ends - time.monotonic(), 0.0))
            log.warning("%s to %s failed (%s); retry %d in %.2fs", what, shown, problem, attempt + 1, delay)
            sleep(delay)
    raise error(f"{shown} failed after {attempt + 1} attempt(s): {problem}")
