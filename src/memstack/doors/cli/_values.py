"""How every CLI group reads values from the command line: one rule, one place.

* A VALUE is JSON when it parses as JSON (``42``, ``true``, ``{"a": 1}``, ``"quoted"``), else the
  text itself; ``--text`` keeps it as text verbatim, ``--json-value`` requires JSON.
* JSON from the command line obeys :mod:`memstack.foundation.limits` (depth, lone surrogates, digits, NaN):
  the check runs before parsing, so nesting 5,000 deep is an error naming the argument, never a
  ``RecursionError``.
* Tags are comma-separated; blanks around and between commas are dropped.
"""

from __future__ import annotations

from typing import Any

import typer

from ...foundation.errors import InvalidValue
from ...foundation.jsontext import loads
from ...foundation.limits import check_text

__all__ = ["JSON_VALUE", "TEXT", "parse_number", "parse_value", "split_tags"]

TEXT = typer.Option(False, "--text", help="Store VALUE as text, even when it looks like JSON.")
JSON_VALUE = typer.Option(False, "--json-value", help="VALUE must be JSON (an error otherwise).")


def parse_value(text: str, field: str = "VALUE", *, as_text: bool = False, as_json: bool = False) -> Any:
    """``text`` read by the rule above.

    Raises:
        InvalidValue: both modes given; JSON required but ``text`` is not JSON; JSON-looking text
            past the limits (nested too deep, a lone surrogate, an integer too long, NaN).

    >>> parse_value('{"a": [1, 2]}'), parse_value("123"), parse_value('"123"'), parse_value("{bad")
    ({'a': [1, 2]}, 123, '123', '{bad')
    >>> parse_value("123", as_text=True)
    '123'
    """
    if as_text and as_json:
        raise InvalidValue("--text and --json-value: give one of them, not both")
    check_text(text, field)
    if as_text:
        return text
    if as_json:
        return loads(text, field)
    return loads(text, field, or_text=True)


def parse_number(text: str, field: str = "AMOUNT") -> int | float:
    """An integer if ``text`` is one, else a finite float.

    Raises:
        InvalidValue: not a number, or NaN / infinity.
    """
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        raise InvalidValue(f"{field} {text!r}: not a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise InvalidValue(f"{field} {text!r}: not a finite number")
    return number


def split_tags(text: str | None) -> list[str] | None:
    """``"a, b,,c"`` → ``["a", "b", "c"]``; ``None`` stays ``None`` (no filter / no tags).

    >>> split_tags(" a, b,,c ")
    ['a', 'b', 'c']
    """
    if text is None:
        return None
    return [tag.strip() for tag in text.split(",") if tag.strip()]
