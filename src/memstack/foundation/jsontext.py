"""Parse JSON text from outside (command line, export files) within :mod:`memstack.foundation.limits`.

``json.loads`` itself recurses once per nesting level and raises ``RecursionError`` on text nested
a few thousand deep, so the depth is measured on the text first, by a scan that skips strings.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from .errors import InvalidValue
from .limits import MAX_DEPTH, MAX_INT_DIGITS, check_json

__all__ = ["check_depth", "loads"]

# A whole string literal (escapes included; unterminated strings run to the end) or one bracket.
_TOKENS: Final = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.S)


def check_depth(text: str, field: str, *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse JSON text whose brackets nest deeper than ``max_depth`` (strings do not count).

    The rule matches :func:`memstack.foundation.limits.check_json`: ``max_depth`` nested containers pass,
    one more does not.

    Raises:
        InvalidValue: nested deeper than ``max_depth``; the message names ``field``.

    >>> check_depth('[[1], {"a": "[[[["}]', "VALUE", max_depth=2)
    >>> check_depth("[[[1]]]", "VALUE", max_depth=2)
    Traceback (most recent call last):
    ...
    memstack.foundation.errors.InvalidValue: VALUE: nested deeper than 2 levels
    """
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > max_depth:
                raise InvalidValue(f"{field}: nested deeper than {max_depth} levels")
        elif token in "]}":
            depth -= 1


def loads(text: str, field: str, *, or_text: bool = False, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of ``text``, checked by :func:`memstack.foundation.limits.check_json`.

    With ``or_text``, text that is not JSON at all is returned as it is (a string); JSON that
    breaks a limit is still refused.

    Raises:
        InvalidValue: nested too deep, a lone surrogate (raw or as a ``\\ud800`` escape), an
            integer too long; or not JSON at all (``NaN`` and ``Infinity`` included) unless
            ``or_text``. The message names ``field``.
    """
    check_depth(text, field, max_depth=max_depth)
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        if or_text:
            return text
        raise InvalidValue(f"{field}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except _NotJson as exc:
        if or_text:
            return text
        raise InvalidValue(f"{field}: not JSON ({exc})") from None
    except ValueError:  # only Python's own integer digit limit is left: JSON, but past ours
        raise InvalidValue(f"{field}: an integer of more than {MAX_INT_DIGITS} digits") from None
    return check_json(value, field, max_depth=max_depth)


class _NotJson(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON number: JSON has no NaN or infinity")
