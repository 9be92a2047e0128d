"""The limits every surface applies to stored values, and the one check that enforces them.

Library, CLI, HTTP and MCP accept exactly the same values because they all call
:func:`check_json` (or :func:`encode_json`) before anything is written:

* JSON only: ``None``, ``bool``, ``int``, finite ``float``, ``str``, ``list``/``tuple`` and
  ``dict`` with ``str`` keys;
* text is valid Unicode: a lone surrogate (``"\\ud800"``) cannot be stored as UTF-8 by SQLite or
  Redis, so it is refused everywhere (``memory://`` included) with the path of the offending field;
* at most :data:`MAX_DEPTH` levels of nesting, at most :data:`MAX_INT_DIGITS` digits in an
  integer, at most :data:`MAX_VALUE_BYTES` bytes of UTF-8 JSON.

The walk is iterative: a value nested 100,000 deep is refused with :class:`InvalidValue`, never a
``RecursionError``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from .errors import InvalidValue

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_VALUE_BYTES",
    "check_json",
    "check_text",
    "encode_json",
]

MAX_DEPTH: Final = 100
"""Deepest nesting of lists and objects in one value (the value itself is depth 0)."""
MAX_INT_DIGITS: Final = 4000
"""Most decimal digits of an integer (CPython refuses to print ints past 4,300 digits)."""
MAX_VALUE_BYTES: Final = 1024 * 1024
"""Largest UTF-8 JSON encoding of one value: 1 MiB."""

_INT_BOUND: Final = 10**MAX_INT_DIGITS
_INT_BOUND_BITS: Final = _INT_BOUND.bit_length()
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def check_text(text: object, field: str) -> str:
    """``text`` if it is a ``str`` that encodes as UTF-8 (no lone surrogates).

    Raises:
        InvalidValue: not a string, or a lone surrogate; the message names ``field``.
    """
    if not isinstance(text, str):
        raise InvalidValue(f"{field}: expected a string, got {type(text).__name__}")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidValue(
                f"{field}: contains a lone surrogate {text[exc.start]!r} at index {exc.start}; "
                "text must be valid Unicode"
            ) from None
    return text


def check_json(value: Any, field: str = "value", *, max_depth: int = MAX_DEPTH) -> Any:
    """``value`` if it is JSON within the limits above (returned unchanged).

    Raises:
        InvalidValue: the first part that breaks a rule, with its path (``field[2]['a']``).
    """
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, path, depth = stack.pop()
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, str):
            check_text(item, path)
        elif isinstance(item, int):
            # Widths decide all but the ints of the bound's own width (test_int_digit_limit_is_exact).
            if item.bit_length() >= _INT_BOUND_BITS and abs(item) >= _INT_BOUND:
                raise InvalidValue(f"{path}: an integer of more than {MAX_INT_DIGITS} digits")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidValue(f"{path}: {item!r} is not a finite number (JSON has no NaN or inf)")
        elif isinstance(item, list | tuple | dict):
            if depth >= max_depth:
                raise InvalidValue(f"{path}: nested deeper than {max_depth} levels")
            if isinstance(item, dict):
                for key, inner in item.items():
                    if not isinstance(key, str):
                        raise InvalidValue(f"{path}: object key {key!r} is not a string")
                    check_text(key, f"{path} key {key[:40]!r}")
                    stack.append((inner, f"{path}[{key[:40]!r}]", depth + 1))
            else:
                stack.extend((inner, f"{path}[{i}]", depth + 1) for i, inner in enumerate(item))
        else:
            raise InvalidValue(
                f"{path}: {type(item).__name__} is not JSON "
                "(allowed: None, bool, int, float, str, list, dict with str keys)"
            )
    return value


def encode_json(
    value: Any, field: str = "value", *, max_bytes: int = MAX_VALUE_BYTES, max_depth: int = MAX_DEPTH
) -> str:
    """The compact JSON text of ``value`` after :func:`check_json`.

    Raises:
        InvalidValue: a rule of :func:`check_json` is broken, or the text exceeds ``max_bytes``.
    """
    check_json(value, field, max_depth=max_depth)
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:  # defensive: check_json refused every known case
        raise InvalidValue(f"{field}: not JSON-serialisable ({exc})") from None
    size = len(text) if len(text) * 4 <= max_bytes else len(text.encode("utf-8"))
    if size > max_bytes:
        raise InvalidValue(f"{field}: {size} bytes of JSON exceed the limit of {max_bytes} bytes")
    return text
