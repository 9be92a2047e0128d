"""Values, keys and names of shared memory: validation and the stored JSON forms (pure functions).

Rules:

* A **value** is JSON: ``None``, ``bool``, ``int``, finite ``float``, ``str``, ``list`` and ``dict``
  with ``str`` keys, nested. Anything else (tuples, sets, NaN, objects) is refused with
  :class:`~memstack.errors.InvalidValue` before anything is written, so every value reads back
  equal to what was written (a string ``"123"`` stays a string).
* A **key** is a ``str`` of 1-256 characters without control characters (``\\x00``-``\\x1f``,
  ``\\x7f``). Python has no symbols: ``"k"`` is the key the seed spells ``:k``.
* A **name** (of a shared memory, network or cache) is 1-128 characters of ``[A-Za-z0-9_.-]``:
  it is embedded in storage keys and in the Redis Cluster hash tag.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from ..errors import InvalidKey, InvalidValue
from ..limits import short_repr

__all__ = [
    "KEY_MAX",
    "NAME_RULE",
    "check_key",
    "check_name",
    "check_value",
    "decode_entry",
    "dumps",
    "encode_entry",
]

KEY_MAX: Final = 256
NAME_RULE: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


def check_name(name: object, what: str = "shared memory name") -> str:
    """``name`` if it follows the name rule.

    Raises:
        InvalidKey: not 1-128 characters of ``[A-Za-z0-9_.-]``.
    """
    if not isinstance(name, str) or NAME_RULE.fullmatch(name) is None:
        raise InvalidKey(
            f"{what} {short_repr(name)}: must be 1-128 characters of A-Z, a-z, 0-9, '_', '.' or '-'"
        )
    return name


def check_key(key: object) -> str:
    """``key`` if it follows the key rule.

    Raises:
        InvalidKey: not a string of 1-256 characters without control characters.
    """
    if not isinstance(key, str):
        raise InvalidKey(f"shared memory key {short_repr(key)}: must be a str, got {type(key).__name__}")
    if not key or len(key) > KEY_MAX or _CONTROL.search(key):
        raise InvalidKey(
            f"shared memory key {short_repr(key)}: must be 1-{KEY_MAX} characters without control characters"
        )
    return key


def _check(value: object, path: str) -> None:
    if value is None or isinstance(value, bool | int | str):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidValue(f"value at {path}: {short_repr(value)} is not JSON (only finite numbers)")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]")
        return
    if isinstance(value, dict):
        for k, item in value.items():
            if not isinstance(k, str):
                raise InvalidValue(
                    f"value at {path}: dict key {short_repr(k)} is not a str (JSON objects have str keys)"
                )
            _check(item, f"{path}[{short_repr(k)}]")
        return
    raise InvalidValue(
        f"value at {path}: {type(value).__name__} {short_repr(value)} is not JSON "
        "(allowed: None, bool, int, float, str, list, dict with str keys)"
    )


def check_value(value: object, what: str = "value") -> Any:
    """``value`` if it is JSON that round-trips exactly.

    Raises:
        InvalidValue: a part of ``value`` is not JSON; the message gives its path.
    """
    _check(value, what)
    return value


def dumps(value: object) -> str:
    """Compact JSON of an already checked value."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode_entry(value: object, version: int, writer: str | None, ts: int) -> str:
    """The stored text of one entry: value, version, writer and write time (engine ms)."""
    return dumps({"value": value, "version": version, "writer": writer, "ts": ts})


def decode_entry(raw: str | None) -> dict[str, Any] | None:
    """The entry dict stored as ``raw`` (None when absent)."""
    if raw is None:
        return None
    entry: dict[str, Any] = json.loads(raw)
    return entry
