"""Values, keys and names of shared memory: validation and the stored JSON forms (pure functions).

Rules:

* A **value** is JSON: ``None``, ``bool``, ``int``, finite ``float``, ``str``, ``list`` and ``dict``
  with ``str`` keys, nested. Anything else (tuples, sets, NaN, objects) is refused with
  :class:`~memstack.foundation.errors.InvalidValue` before anything is written, so every value reads back
  equal to what was written (a string ``"123"`` stays a string). The limits every tier shares
  apply too (:mod:`memstack.foundation.limits`): no lone surrogates, nesting at most 100 deep, integers of
  at most 4,000 digits, at most 1 MiB of JSON.
* A **key** is a ``str`` of 1-256 characters without control characters (``\\x00``-``\\x1f``,
  ``\\x7f``) nor lone surrogates. Python has no symbols: ``"k"`` is the key the seed spells ``:k``.
* A **name** (of a shared memory, network or cache) is 1-128 characters of ``[A-Za-z0-9_.-]``:
  it is embedded in storage keys and in the Redis Cluster hash tag.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ...foundation.errors import InvalidKey
from ...foundation.keyspace import labelled
from ...foundation.limits import check_match, check_text, encode_json, short_repr

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
    return check_match(
        name, NAME_RULE, what, "1-128 characters of A-Z, a-z, 0-9, '_', '.' or '-'", InvalidKey
    )


def check_key(key: object) -> str:
    """``key`` if it follows the key rule.

    Raises:
        InvalidKey: not a string of 1-256 characters without control characters.
        InvalidValue: a lone surrogate in the key.
    """
    if not isinstance(key, str):
        raise InvalidKey(f"shared memory key {short_repr(key)}: must be a str, got {type(key).__name__}")
    if not key or len(key) > KEY_MAX or _CONTROL.search(key):
        raise InvalidKey(
            f"shared memory key {short_repr(key)}: must be 1-{KEY_MAX} characters without control characters"
        )
    return check_text(key, "key")


def check_value(value: object, what: str = "value") -> Any:
    """``value`` if it is JSON that round-trips exactly, within :mod:`memstack.foundation.limits` (no lone
    surrogates, nesting at most 100 deep, at most 1 MiB of JSON).

    Raises:
        InvalidValue: a part of ``value`` is not JSON (tuples included: they would read back as
            lists) or the value is too large; the message gives its path.
    """
    encode_json(value, what, allow_tuples=False)
    return value


def dumps(value: object) -> str:
    """Compact JSON of an already checked value."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode_entry(value: object, version: int, writer: str | None, ts: int, subject: str | None = None) -> str:
    """The stored text of one entry: value, version, writer, write time (engine ms) and the
    version's subject label when it has one."""
    return dumps(labelled({"value": value, "version": version, "writer": writer, "ts": ts}, subject))


def decode_entry(raw: str | None) -> dict[str, Any] | None:
    """The entry dict stored as ``raw`` (None when absent)."""
    if raw is None:
        return None
    entry: dict[str, Any] = json.loads(raw)
    return entry
