"""The request-body check: every JSON body meets :mod:`memstack.foundation.limits` before any route sees it.

A body with a lone surrogate, a NaN/Infinity literal, a non-finite number (``1e999``), an integer
of thousands of digits, or nesting deeper than the limit is refused with
:class:`~memstack.foundation.errors.InvalidValue` naming the field (``body['value'][3]``): a 400, never a 500
from deep inside a tier or the JSON encoder. Malformed JSON is left to FastAPI (its 422).
"""

from __future__ import annotations

import json
from typing import Any, Final

from ...foundation.errors import InvalidValue
from ...foundation.limits import MAX_DEPTH, MAX_INT_DIGITS, check_json

__all__ = ["BODY_MAX_DEPTH", "check_body", "is_json"]

BODY_MAX_DEPTH: Final = MAX_DEPTH + 2
"""Deepest nesting of a whole body: a value at the library's limit still fits in its envelope
(``{"value": ...}``, a message in a list); the library then checks the value at its own limit."""


def is_json(content_type: str | None) -> bool:
    """True for the media types FastAPI parses as JSON (and for none at all)."""
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _refuse_constant(name: str) -> Any:
    raise InvalidValue(f"body: {name} is not a JSON number (non-finite numbers cannot be stored)")


def check_body(raw: bytes) -> None:
    """Refuse a JSON body that breaks a value limit; let malformed JSON through to FastAPI.

    Raises:
        InvalidValue: the first field that breaks a rule, named by its path from ``body``.
    """
    if not raw.strip():
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return  # FastAPI answers 422 for a body that is not JSON text
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise InvalidValue(f"body: nested deeper than {BODY_MAX_DEPTH} levels") from None
    except (json.JSONDecodeError, InvalidValue) as exc:
        if isinstance(exc, InvalidValue):
            raise
        return
    except ValueError as exc:  # CPython's own cap on integer digits, met while parsing
        if "digits" in str(exc):
            raise InvalidValue(f"body: an integer of more than {MAX_INT_DIGITS} digits") from None
        return
    check_json(value, "body", max_depth=BODY_MAX_DEPTH)
