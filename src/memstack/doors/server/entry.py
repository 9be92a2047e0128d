"""What every request must be before any route sees it: text that decodes, exactly.

The ASGI server decodes a percent-encoded path with ``errors="replace"``, and Starlette decodes
query strings the same way, so ``/v1/shared/b/keys/a%FFb``, ``a%FEb`` and ``a%EF%BF%BDb`` would
all name the key ``a\\ufffdb``: different keys colliding in one. Headers are decoded as Latin-1,
which never fails and garbles everything else. :func:`entry_problem` checks the raw bytes
instead: the path, every query name and value, and every header value must be UTF-8 once
percent-decoded (no stray bytes, no encoded surrogates), without NUL characters in the path or
query. A request that breaks this is a 400 naming the part, before routing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import unquote_to_bytes

__all__ = ["MAX_QUERY_BYTES", "entry_problem"]

MAX_QUERY_BYTES: Final = 64 * 1024
"""Longest query string accepted (the ASGI server already caps the request line and headers)."""


def _undecodable(raw: bytes) -> str | None:
    """Why the percent-decoded ``raw`` is not acceptable text, or None."""
    try:
        text = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte 0x{exc.object[exc.start]:02X} is not valid UTF-8 (percent-encoded text must be UTF-8)"
    if "\x00" in text:
        return "contains a NUL character"
    return None


def _query_problem(query: bytes) -> str | None:
    if len(query) > MAX_QUERY_BYTES:
        return f"query string: {len(query)} bytes, at most {MAX_QUERY_BYTES}"
    for part in query.replace(b";", b"&").split(b"&"):
        name, _, value = part.replace(b"+", b" ").partition(b"=")
        for what, raw in (("name", name), ("value", value)):
            why = _undecodable(raw)
            if why is not None:
                shown = _shown(name) if what == "value" else "a parameter"
                return f"query {what} of {shown}: {why}"
    return None


def _shown(raw_name: bytes) -> str:
    try:
        return repr(unquote_to_bytes(raw_name).decode("utf-8"))[:60]
    except UnicodeDecodeError:
        return "a parameter"


def _header_problem(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    for name, value in headers:
        try:
            value.decode("utf-8")
        except UnicodeDecodeError as exc:
            label = name.decode("latin-1")[:60]
            return f"header {label!r}: byte 0x{exc.object[exc.start]:02X} is not valid UTF-8"
    return None


def entry_problem(scope: dict[str, Any] | Any) -> str | None:
    """Why the request of ``scope`` cannot be read as text (path, query, headers), or None.

    The path is read from ``raw_path``, which uvicorn and Starlette's test client both give;
    a server that gives none has only its query string and headers checked.
    """
    raw_path = scope.get("raw_path")
    if isinstance(raw_path, bytes | bytearray):
        why = _undecodable(bytes(raw_path))
        if why is not None:
            return f"path: {why}"
    query = scope.get("query_string") or b""
    if query:
        why = _query_problem(bytes(query))
        if why is not None:
            return why
    return _header_problem(scope.get("headers") or ())
