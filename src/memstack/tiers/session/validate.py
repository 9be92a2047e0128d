"""Input rules of the session tier: ids, keys, values, TTLs (pure, no storage).

Full-string matches (DESIGN §6: ``"abc\\n"`` is invalid, unlike the seed's ``re.match`` + ``$``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from ...foundation import limits
from ...foundation.errors import InvalidKey, InvalidSessionId
from ...foundation.limits import MAX_TTL_SECONDS, encode_json, short_repr

__all__ = [
    "DEFAULT_MAX_VALUE_BYTES",
    "KEY_RULE",
    "MAX_TTL_SECONDS",
    "RESERVED_KEYS",
    "SESSION_ID_RULE",
    "check_amount",
    "check_key",
    "check_session_id",
    "decode_value",
    "encode_entry",
    "encode_value",
    "put_entry",
    "ttl_ms",
]

SESSION_ID_RULE: Final = re.compile(r"[a-zA-Z0-9_\-]{1,128}")
KEY_RULE: Final = re.compile(r"[a-zA-Z0-9_\-\.]{1,256}")
RESERVED_KEYS: Final = frozenset({"__keys__", "__history__", "__meta__"})
"""Key names of the layout itself: a value stored under one would overwrite session structure."""

# One encoder for every value: json.dumps with options builds a new encoder per call.
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))

DEFAULT_MAX_VALUE_BYTES: Final = limits.MAX_VALUE_BYTES
"""Default largest JSON encoding (UTF-8 bytes) of one stored value: 1 MiB."""


def check_session_id(session_id: object) -> str:
    """``session_id`` if it is 1-128 characters of ``[A-Za-z0-9_-]``.

    Raises:
        InvalidSessionId: anything else (including non-strings and a trailing newline).
    """
    if not isinstance(session_id, str) or SESSION_ID_RULE.fullmatch(session_id) is None:
        raise InvalidSessionId(
            f"Invalid session_id: {short_repr(session_id)}. "
            "Must be 1-128 alphanumeric characters, hyphens, or underscores."
        )
    return session_id


def check_key(key: object) -> str:
    """``key`` if it is 1-256 characters of ``[A-Za-z0-9_.-]`` and not a reserved layout name.

    Raises:
        InvalidKey: anything else.
    """
    if not isinstance(key, str) or KEY_RULE.fullmatch(key) is None:
        raise InvalidKey(
            f"Invalid key: {short_repr(key)}. Must be 1-256 "
            f"alphanumeric characters, hyphens, underscores, or dots."
        )
    if key in RESERVED_KEYS:
        raise InvalidKey(
            f"Invalid key: {short_repr(key)}. Reserved by the "
            f"session layout ({', '.join(sorted(RESERVED_KEYS))})."
        )
    return key


def encode_value(value: Any, max_bytes: int = DEFAULT_MAX_VALUE_BYTES, field: str = "value") -> str:
    """The JSON text stored for ``value``: :func:`memstack.foundation.limits.encode_json`, the rule every
    tier and surface shares.

    Raises:
        InvalidValue: not JSON (sets, objects, non-string dict keys, NaN/inf, circular structures,
            lone surrogates, nesting deeper than 100, integers of more than 4000 digits) or longer
            than ``max_bytes`` once encoded; the message names ``field`` and the part at fault.
    """
    return encode_json(value, field, max_bytes=max_bytes)


def encode_entry(entry: dict[str, Any]) -> str:
    """The compact JSON text of a history entry built by the tier (always serialisable)."""
    return _ENCODER.encode(entry)


def put_entry(key: str, timestamp: float) -> str:
    """``encode_entry({"op": "put", "key": key, "timestamp": timestamp})`` for a key that passed
    :func:`check_key` (its characters need no JSON escaping), written without the encoder: it is
    the JSON the tier writes most (``bench/session_ops.py``)."""
    if type(timestamp) is float and math.isfinite(timestamp):
        return f'{{"op":"put","key":"{key}","timestamp":{short_repr(timestamp)}}}'
    return encode_entry({"op": "put", "key": key, "timestamp": timestamp})


def decode_value(raw: str) -> Any:
    """The value stored as JSON text ``raw`` (a fresh object every call)."""
    return json.loads(raw)


def check_amount(amount: object) -> int | float:
    """``amount`` if it is a finite int or float (bool excluded) of magnitude at most 2**63-1.

    Raises:
        InvalidValue: anything else (the message names ``amount``).
    """
    return limits.check_amount(amount, "amount")


def ttl_ms(ttl_seconds: float | None, field: str = "session TTL") -> int | None:
    """The seed's TTL rounding: ``max(1, ceil(ttl * 1000))`` ms, or None for no TTL (0/None).

    Raises:
        InvalidValue: a negative, non-finite or longer than :data:`MAX_TTL_SECONDS` TTL.
    """
    if ttl_seconds is None or (type(ttl_seconds) in (int, float) and ttl_seconds == 0):
        return None
    return max(1, math.ceil(limits.check_ttl(ttl_seconds, field, allow_zero=True) * 1000))
