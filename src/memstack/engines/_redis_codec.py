"""Pure encoding of seam batches for the Redis script, and decoding of its replies.

No I/O here: :func:`encode` turns ops into ``(keys, payload)`` for ``EVALSHA``; :func:`decode`
turns the script's JSON reply back into the Python values the memory engine returns;
:func:`script_error` maps the script's error replies to memstack errors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any, Final

from ..errors import EngineError, InvalidValue, NotANumber
from .base import BatchResult, Op, WrongType

__all__ = ["decode", "encode", "glob_escape", "number_text", "script_error"]

# Ops whose every argument is a key, whose first two are, and which touch no key.
_ALL_KEYS: Final = frozenset({"delete", "mget"})
_NO_KEYS: Final = frozenset({"publish"})

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_loads = json.loads


def number_text(amount: int | float) -> str:
    """``amount`` as the script reads it: decimal for ints, ``repr`` for floats."""
    return str(amount) if isinstance(amount, int) else repr(amount)


def _score(value: float, key: str) -> str:
    if math.isnan(value):
        raise InvalidValue(f"sorted set {key!r}: score must be a number, got NaN")
    return repr(value)


def _enc_incr(args: tuple[Any, ...]) -> list[Any]:
    return [args[0], number_text(args[1])]


def _enc_hincr(args: tuple[Any, ...]) -> list[Any]:
    return [args[0], args[1], number_text(args[2])]


def _enc_zadd(args: tuple[Any, ...]) -> list[Any]:
    key, mapping = args
    return [key, {m: _score(s, key) for m, s in mapping.items()}]


def _enc_zrangebyscore(args: tuple[Any, ...]) -> list[Any]:
    key, low, high, desc, offset, count = args
    if offset < 0:  # Python slicing semantics: fetch all, slice on the way back
        offset, count = 0, None
    return [key, _score(low, key), _score(high, key), desc, offset, count]


_ENCODERS: Final[dict[str, Callable[[tuple[Any, ...]], list[Any]]]] = {
    "incr": _enc_incr,
    "hincr": _enc_hincr,
    "zadd": _enc_zadd,
    "zrangebyscore": _enc_zrangebyscore,
}


def encode(ops: Sequence[Op]) -> tuple[list[str], str]:
    """The keys ``ops`` touch (each once, in order) and the JSON payload of the script.

    Raises:
        InvalidValue: a NaN score (Redis has no NaN scores).
    """
    keys: dict[str, None] = {}
    payload: list[list[Any]] = []
    for name, args in ops:
        encoder = _ENCODERS.get(name)
        if encoder is None:
            payload.append([name, *args])
        else:
            payload.append([name, *encoder(args)])
        if name in _NO_KEYS:
            continue
        if name in _ALL_KEYS:
            keys.update(dict.fromkeys(args))
        elif name == "copy_ttl":
            keys[args[0]] = None
            keys[args[1]] = None
        else:
            keys[args[0]] = None
    return list(keys), _dumps(payload)


def _number(text: str) -> int | float:
    body = text[1:] if text[:1] == "-" else text
    return int(text) if body.isdigit() else float(text)


def _strings(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _hash(value: Any) -> dict[str, str]:
    if not isinstance(value, list):
        return {}
    return dict(zip(value[::2], value[1::2], strict=True))


def _pairs(value: Any) -> list[tuple[str, float]]:
    if not isinstance(value, list):
        return []
    return [(m, float(s)) for m, s in zip(value[::2], value[1::2], strict=True)]


def _score_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


_DECODERS: Final[dict[str, Callable[[Any], Any]]] = {
    "incr": _number,
    "hincr": _number,
    "mget": _strings,
    "hmget": _strings,
    "hkeys": _strings,
    "lrange": _strings,
    "hgetall": _hash,
    "smembers": lambda value: set(value) if isinstance(value, list) else set(),
    "zscore": _score_or_none,
    "zrange": _pairs,
}


def decode(ops: Sequence[Op], reply: str) -> BatchResult:
    """The :class:`BatchResult` of the script's JSON ``reply`` to ``ops``."""
    applied, raw = _loads(reply)
    if not isinstance(raw, list):
        raw = []
    results: list[Any] = []
    for (name, args), value in zip(ops, raw, strict=False):
        if name == "zrangebyscore":
            pairs = _pairs(value)
            offset, count = args[4], args[5]
            if offset < 0:
                end = None if count is None or count < 0 else offset + count
                pairs = pairs[offset:end]
            results.append(pairs)
            continue
        decoder = _DECODERS.get(name)
        results.append(value if decoder is None else decoder(value))
    return BatchResult(bool(applied), results)


def script_error(message: str) -> Exception:
    """The memstack error for an error reply of the script (``EngineError`` if unknown)."""
    kind, _, detail = message.partition(" ")
    if kind == "MSWRONGTYPE":
        key, actual, wanted = _loads(detail)
        return WrongType(f"key {key!r} holds a {actual}, not a {wanted}")
    if kind == "MSNAN":
        key, field, why = _loads(detail)
        label = key if field is None else f"{key}.{field}"
        return NotANumber(f"cannot increment {label!r}: {why}")
    return EngineError(f"redis script failed: {message}")


def glob_escape(text: str) -> str:
    """``text`` with the glob characters of Redis ``MATCH`` escaped, so it matches literally."""
    return "".join("\\" + c if c in "\\*?[]" else c for c in text)
