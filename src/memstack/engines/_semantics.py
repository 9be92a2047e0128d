"""Pure helpers that pin the meaning of seam commands, shared by the Python-side engines.

The Redis engine reproduces the same rules in Lua; the conformance suite checks they agree.
"""

from __future__ import annotations

import math
import re

from ..foundation.errors import NotANumber

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# A stored value counts as a number only in JSON's own number syntax (no "0x10", no " 5").
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def parse_number(raw: str | None, key: str) -> int | float:
    """The JSON number in ``raw`` (None counts as 0).

    Raises:
        NotANumber: ``raw`` is not a JSON number or is out of the 64-bit integer range.
    """
    if raw is None:
        return 0
    match = _NUMBER.fullmatch(raw)
    if match is None:
        raise NotANumber(f"cannot increment {key!r}: stored value {raw[:60]!r} is not a JSON number")
    if match.group(1) is None and match.group(2) is None:
        value = int(raw)
        if not INT64_MIN <= value <= INT64_MAX:
            raise NotANumber(f"cannot increment {key!r}: {raw[:60]!r} is out of the 64-bit range")
        return value
    number = float(raw)
    if not math.isfinite(number):
        raise NotANumber(f"cannot increment {key!r}: {raw[:60]!r} is not finite")
    return number


def add_numbers(current: int | float, amount: int | float, key: str) -> int | float:
    """``current + amount`` with the seam's rules: int when both are ints, 64-bit bounded.

    Raises:
        NotANumber: the sum leaves the 64-bit integer range or is not finite.
    """
    total = current + amount
    if isinstance(total, int):
        if not INT64_MIN <= total <= INT64_MAX:
            raise NotANumber(f"incrementing {key!r} would overflow a 64-bit integer")
        return total
    if not math.isfinite(total):
        raise NotANumber(f"incrementing {key!r} gives a non-finite number")
    return total


def format_number(value: int | float) -> str:
    """The canonical stored text of a number: ``str`` for ints, shortest ``repr`` for floats."""
    return str(value) if isinstance(value, int) else repr(float(value))


def slice_bounds(start: int, stop: int, length: int) -> tuple[int, int]:
    """Redis inclusive ``start..stop`` (negative from the end) as a Python ``[lo:hi]`` slice."""
    if start < 0:
        start = max(length + start, 0)
    if stop < 0:
        stop = length + stop
    stop = min(stop, length - 1)
    if start > stop or start >= length:
        return 0, 0
    return start, stop + 1


def upper_bound(prefix: str) -> str | None:
    """The least text greater than every text starting with ``prefix`` (None: no bound): the end of
    a prefix scan over a sorted text index (SQLite, PostgreSQL)."""
    stripped = prefix.rstrip("\U0010ffff")
    if not stripped:
        return None
    code = ord(stripped[-1]) + 1
    if 0xD800 <= code <= 0xDFFF:  # surrogates are no text: the next code point is U+E000
        code = 0xE000
    return stripped[:-1] + chr(code)
