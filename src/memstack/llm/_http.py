"""The HTTP plumbing shared by the OpenAI-compatible clients (embeddings, chat completions).

One POST of a JSON body with a bearer token, retried with exponential backoff on what is safe to
retry: connection errors, timeouts, HTTP 429 and 5xx (``Retry-After`` is honoured, capped). Any
other HTTP error, or a reply that is not JSON, raises the caller's error class at once.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, Final

from ..foundation.errors import InvalidConfiguration, MemstackError
from ..foundation.redact import redact_url

__all__ = ["MAX_RETRY_AFTER", "check_client", "post_json", "retry_after"]

log = logging.getLogger("memstack.llm")

MAX_RETRY_AFTER: Final = 30.0
"""A server's ``Retry-After`` is honoured up to this many seconds."""


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
) -> Any:
    """POST ``body`` (JSON bytes) to ``url`` and return the decoded JSON reply.

    Raises:
        error: the server refused the request (4xx other than 429), sent something that is not
            JSON, or every attempt failed (unreachable, timed out, 429, 5xx).
    """
    shown = redact_url(url)  # what errors and logs name: the URL without credentials
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    problem = ""
    for attempt in range(retries + 1):
        delay = backoff * (2**attempt)
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
            return json.loads(raw)
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace")
            problem = f"HTTP {exc.code}: {detail}"
            if exc.code != 429 and exc.code < 500:
                raise error(f"{shown} refused the request: {problem}") from exc
            delay = max(delay, retry_after(exc.headers.get("Retry-After")))
        except (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            problem = f"{type(reason).__name__}: {reason}"
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise error(f"{shown} sent a reply that is not JSON: {exc}") from exc
        except (RecursionError, ValueError) as exc:  # nested past the parser's stack, or an int too long
            raise error(f"{shown} sent a reply JSON cannot read ({type(exc).__name__})") from None
        if attempt < retries:
            log.warning("%s to %s failed (%s); retry %d in %.2fs", what, shown, problem, attempt + 1, delay)
            sleep(delay)
    raise error(f"{shown} failed after {retries + 1} attempt(s): {problem}")
