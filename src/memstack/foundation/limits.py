"""The limits every surface applies to stored values, and the one check that enforces them.

Library, CLI, HTTP and MCP accept exactly the same values because they all call
:func:`check_json` (or :func:`encode_json`) before anything is written:

* JSON only: ``None``, ``bool``, ``int``, finite ``float``, ``str``, ``list``/``tuple`` and
  ``dict`` with ``str`` keys;
* text is valid Unicode: a lone surrogate (``"\\ud800"``) cannot be stored as UTF-8 by SQLite or
  Redis, so it is refused everywhere (``memory://`` included) with the path of the offending field;
* at most :data:`MAX_DEPTH` levels of nesting, at most :data:`MAX_INT_DIGITS` digits in an
  integer, at most :data:`MAX_VALUE_BYTES` bytes of UTF-8 JSON.

The same module holds the other shared rules of the tiers' inputs: TTLs (:func:`check_ttl`, at
most :data:`MAX_TTL_SECONDS`), bounded integers (:func:`check_int`, e.g. limits and counts) and
increment amounts (:func:`check_amount`, within :data:`MAX_AMOUNT` so every engine can add them).

The walk is iterative: a value nested 100,000 deep is refused with :class:`InvalidValue`, never a
``RecursionError``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from .errors import InvalidInput, InvalidValue

__all__ = [
    "MAX_AMOUNT",
    "MAX_COUNT",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_SEARCH_OFFSET",
    "MAX_TTL_SECONDS",
    "MAX_VALUE_BYTES",
    "bad_segment",
    "check_amount",
    "check_int",
    "check_json",
    "check_match",
    "check_text",
    "check_ttl",
    "encode_json",
    "one_line",
    "short_repr",
]

MAX_DEPTH: Final = 100
"""Deepest nesting of lists and objects in one value (the value itself is depth 0)."""
MAX_INT_DIGITS: Final = 4000
"""Most decimal digits of an integer (CPython refuses to print ints past 4,300 digits)."""
MAX_VALUE_BYTES: Final = 1024 * 1024
"""Largest UTF-8 JSON encoding of one value: 1 MiB."""

MAX_TTL_SECONDS: Final = 10 * 365 * 24 * 3600
"""Longest TTL of anything stored: ten years (expire-at times are 64-bit milliseconds on every
engine, and the Redis engine adds a 100-year bias under a manual clock)."""
MAX_AMOUNT: Final = 2**63 - 1
"""Largest magnitude of an increment amount: Redis counters are signed 64-bit integers."""
MAX_SEARCH_OFFSET: Final = 10_000
"""Deepest page a search reaches: ``offset`` at most this (long-term memory and documents)."""
MAX_COUNT: Final = 2**53
"""Largest count or limit a tier takes (list lengths, result counts, token counts): exact as a
float and far inside every engine's 64-bit range."""

_INT_BOUND: Final = 10**MAX_INT_DIGITS
_INT_BOUND_BITS: Final = _INT_BOUND.bit_length()
_MAX_INT_BITS: Final = _INT_BOUND_BITS - 1  # every int this wide or narrower is below the bound
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def check_match(
    value: object, rule: re.Pattern[str], what: str, must: str, error: type[InvalidInput] = InvalidValue
) -> str:
    """``value`` if it is a str ``rule`` matches whole: the one check behind every id and name rule.

    Raises:
        error: anything else, as ``"{what} {value}: must be {must}"`` (``must`` says the rule).
    """
    if not isinstance(value, str) or rule.fullmatch(value) is None:
        raise error(f"{what} {short_repr(value)}: must be {must}")
    return value


def bad_segment(path: str, rule: re.Pattern[str]) -> str | None:
    """The first ``/``-separated segment of ``path`` that ``rule`` does not match whole (None: every
    one does): the check behind every slash-separated name (categories, working-memory keys)."""
    return next((segment for segment in path.split("/") if rule.fullmatch(segment) is None), None)


def check_text(text: object, field: str, *, max_bytes: int | None = None) -> str:
    """``text`` if it is a ``str`` that encodes as UTF-8 (no lone surrogates), of at most
    ``max_bytes`` UTF-8 bytes when given.

    Raises:
        InvalidValue: not a string, a lone surrogate, or too long; the message names ``field``.
    """
    if not isinstance(text, str):
        raise InvalidValue(f"{field}: expected a string, got {type(text).__name__} {short_repr(text)}")
    if not text.isascii():
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise InvalidValue(
                f"{field}: contains a lone surrogate {text[exc.start]!r} at index {exc.start}; "
                "text must be valid Unicode"
            ) from None
    else:
        size = len(text)
    if max_bytes is not None and size > max_bytes:
        raise InvalidValue(f"{field}: {size} bytes of text exceed the limit of {max_bytes} bytes")
    return text


def check_json(
    value: Any, field: str = "value", *, max_depth: int = MAX_DEPTH, allow_tuples: bool = True
) -> Any:
    """``value`` if it is JSON within the limits above (returned unchanged). Tuples count as
    lists unless ``allow_tuples`` is False (a tier whose values must read back equal).

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
        elif isinstance(item, list | dict) or (allow_tuples and isinstance(item, tuple)):
            if depth >= max_depth:
                raise InvalidValue(f"{path}: nested deeper than {max_depth} levels")
            if isinstance(item, dict):
                for key, inner in item.items():
                    if not isinstance(key, str):
                        raise InvalidValue(f"{path}: object key {short_repr(key)} is not a string")
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
    value: Any,
    field: str = "value",
    *,
    max_bytes: int = MAX_VALUE_BYTES,
    max_depth: int = MAX_DEPTH,
    allow_tuples: bool = True,
) -> str:
    """The compact JSON text of ``value`` after :func:`check_json`.

    Values made of plain ``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` take a fast
    path (the C encoder, one walk over containers only, one UTF-8 check of the whole text); any
    other value, or any value that breaks a rule, is walked by :func:`check_json`, whose error
    names the offending part.

    Raises:
        InvalidValue: a rule of :func:`check_json` is broken, or the text exceeds ``max_bytes``.
    """
    try:
        text: str | None = _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):
        text = None
    if text is None or not _plain(value, max_depth) or not _utf8(text):
        check_json(value, field, max_depth=max_depth, allow_tuples=allow_tuples)
        if text is None:  # defensive: check_json refused every known case
            raise InvalidValue(f"{field}: not JSON-serialisable")
    size = len(text) if len(text) * 4 <= max_bytes else len(text.encode("utf-8"))
    if size > max_bytes:
        raise InvalidValue(f"{field}: {size} bytes of JSON exceed the limit of {max_bytes} bytes")
    return text


_SCALARS: Final = frozenset({str, float, bool, type(None)})


def _plain(value: Any, max_depth: int) -> bool:
    """True when ``value`` is built of exact JSON types only, with str keys, within ``max_depth``
    and without an oversized int (strings and floats are left to the encoder and :func:`_utf8`)."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return kind in _SCALARS or (kind is int and value.bit_length() <= _MAX_INT_BITS)
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth >= max_depth:
            return False
        if type(item) is dict:
            if not all(type(k) is str for k in item):
                return False
            inner_items = item.values()
        else:
            inner_items = item
        for inner in inner_items:
            kind = type(inner)
            if kind is dict or kind is list:
                stack.append((inner, depth + 1))
            elif kind is int:
                if inner.bit_length() > _MAX_INT_BITS:
                    return False
            elif kind not in _SCALARS:
                return False
    return True


def _utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_ttl(ttl: object, field: str = "ttl", *, allow_zero: bool = False) -> float:
    """``ttl`` seconds as a float, if it is a number from 0 (excluded unless ``allow_zero``) to
    :data:`MAX_TTL_SECONDS`.

    Raises:
        InvalidValue: not an int or float (bool excluded), NaN, negative, zero when not allowed,
            or longer than ten years; the message names ``field``.
    """
    # A range check, not math.isfinite: it also refuses NaN and ints too large for a float.
    if (
        isinstance(ttl, bool)
        or not isinstance(ttl, int | float)
        or not 0 <= ttl <= MAX_TTL_SECONDS
        or (ttl == 0 and not allow_zero)
    ):
        low = "from 0 to" if allow_zero else "greater than 0 and at most"
        raise InvalidValue(
            f"{field}: {short_repr(ttl)} is not a number of seconds {low} {MAX_TTL_SECONDS} (10 years)"
        )
    return float(ttl)


def check_int(value: object, field: str, *, minimum: int = 0, maximum: int = MAX_COUNT) -> int:
    """``value`` if it is an int (bool excluded) from ``minimum`` to ``maximum``.

    Raises:
        InvalidValue: anything else; the message names ``field`` and the range.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise InvalidValue(f"{field}: {short_repr(value)} is not an int from {minimum} to {maximum}")
    return value


def check_amount(amount: object, field: str = "amount") -> int | float:
    """``amount`` if it is an int or finite float (bool excluded) of magnitude at most
    :data:`MAX_AMOUNT`.

    Raises:
        InvalidValue: anything else; the message names ``field``.
    """
    if (
        isinstance(amount, bool)
        or not isinstance(amount, int | float)
        or not -MAX_AMOUNT <= amount <= MAX_AMOUNT
    ):
        raise InvalidValue(
            f"{field}: {short_repr(amount)} is not a finite int or float of magnitude at most 2**63-1"
        )
    return amount


def short_repr(value: object) -> str:
    """``repr(value)`` cut to 300 characters; a huge int by its size (its repr may not exist)."""
    if isinstance(value, int) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__name__} object>"
    return text if len(text) <= 300 else text[:297] + "..."


# Every character str.splitlines() breaks on: a door prints an error on one line.
_LINE_BREAKS: Final = re.compile(r"\s*[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]\s*")


def one_line(text: str) -> str:
    """``text`` on one line: each line break, with the blanks around it, becomes one space; other
    runs of spaces stay, so a message quoting ``'a  b'`` reads the same on every door."""
    return _LINE_BREAKS.sub(" ", text).strip()
