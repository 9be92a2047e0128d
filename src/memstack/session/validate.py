"""Input rules of the session tier: ids, keys, values, TTLs (pure, no storage).

Full-string matches (DESIGN §6: ``"abc\\n"`` is invalid, unlike the seed's ``re.match`` + ``$``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from ..errors import InvalidKey, InvalidSessionId, InvalidValue

__all__ = [
    "DEFAULT_MAX_VALUE_BYTES",
    "KEY_RULE",
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

DEFAULT_MAX_VALUE_BYTES: Final = 1024 * 1024
"""Default largest JSON encoding (UTF-8 bytes) of one stored value: 1 MiB."""


def check_session_id(session_id: object) -> str:
    """``session_id`` if it is 1-128 characters of ``[A-Za-z0-9_-]``.

    Raises:
        InvalidSessionId: anything else (including non-strings and a trailing newline).
    """
    if not isinstance(session_id, str) or SESSION_ID_RULE.fullmatch(session_id) is None:
        raise InvalidSessionId(
            f"Invalid session_id: {session_id!r}. "
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
            f"Invalid key: {key!r}. Must be 1-256 alphanumeric characters, hyphens, underscores, or dots."
        )
    if key in RESERVED_KEYS:
        raise InvalidKey(
            f"Invalid key: {key!r}. Reserved by the session layout ({', '.join(sorted(RESERVED_KEYS))})."
        )
    return key


def encode_value(value: Any, max_bytes: int = DEFAULT_MAX_VALUE_BYTES) -> str:
    """The JSON text stored for ``value``.

    Raises:
        InvalidValue: not JSON-serialisable (sets, objects, non-string dict keys, NaN/inf,
            circular structures) or longer than ``max_bytes`` once encoded.
    """
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidValue(f"value {_short(value)} is not JSON-serialisable: {exc}") from None
    if "{" in text and _has_non_str_keys(value):
        # json.dumps turns 1 into "1" silently; the value would not come back equal.
        raise InvalidValue(f"value {_short(value)} has non-string dict keys; JSON objects need str keys")
    # A str holds at most 4 UTF-8 bytes per character: encode only when the limit is in reach.
    size = len(text) if len(text) * 4 <= max_bytes else len(text.encode("utf-8"))
    if size > max_bytes:
        raise InvalidValue(f"value of {size} bytes exceeds the value size limit of {max_bytes} bytes")
    return text


def encode_entry(entry: dict[str, Any]) -> str:
    """The compact JSON text of a history entry built by the tier (always serialisable)."""
    return _ENCODER.encode(entry)


def put_entry(key: str, timestamp: float) -> str:
    """``encode_entry({"op": "put", "key": key, "timestamp": timestamp})`` for a key that passed
    :func:`check_key` (its characters need no JSON escaping), written without the encoder: it is
    the JSON the tier writes most (``bench/session_ops.py``)."""
    if type(timestamp) is float and math.isfinite(timestamp):
        return f'{{"op":"put","key":"{key}","timestamp":{timestamp!r}}}'
    return encode_entry({"op": "put", "key": key, "timestamp": timestamp})


def decode_value(raw: str) -> Any:
    """The value stored as JSON text ``raw`` (a fresh object every call)."""
    return json.loads(raw)


def check_amount(amount: object) -> int | float:
    """``amount`` if it is a finite int or float (bool excluded).

    Raises:
        InvalidValue: anything else.
    """
    if isinstance(amount, bool) or not isinstance(amount, int | float) or not math.isfinite(amount):
        raise InvalidValue(f"increment amount {amount!r}: must be a finite int or float")
    return amount


# Expire-at times are 64-bit milliseconds on every engine, and the Redis engine adds a 100-year bias
# under a manual clock (engines/redis.py); ten years leaves room for both.
MAX_TTL_SECONDS = 10 * 365 * 24 * 3600


def ttl_ms(ttl_seconds: float | None) -> int | None:
    """The seed's TTL rounding: ``max(1, ceil(ttl * 1000))`` ms, or None for no TTL (0/None).

    Raises:
        InvalidValue: a negative, non-finite or longer than :data:`MAX_TTL_SECONDS` TTL.
    """
    if ttl_seconds is None or ttl_seconds == 0:
        return None
    # A range check, not math.isfinite: it also refuses NaN and ints too large for a float.
    if (
        isinstance(ttl_seconds, bool)
        or not isinstance(ttl_seconds, int | float)
        or not 0 <= ttl_seconds <= MAX_TTL_SECONDS
    ):
        raise InvalidValue(
            f"session TTL {ttl_seconds!r}: must be a number of seconds from 0 to {MAX_TTL_SECONDS} (10 years)"
        )
    return max(1, math.ceil(ttl_seconds * 1000))


def _has_non_str_keys(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    return True
                if isinstance(inner, dict | list | tuple):
                    stack.append(inner)
        elif isinstance(item, list | tuple):
            stack.extend(inner for inner in item if isinstance(inner, dict | list | tuple))
    return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
