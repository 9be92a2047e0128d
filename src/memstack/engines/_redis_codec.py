"""Pure encoding of seam batches for the Redis script, and decoding of its replies.

No I/O here: :func:`encode` turns ops into ``(keys, argv)`` for ``EVALSHA`` and :func:`pack`
into the bytes of one request; :func:`decode`
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

__all__ = ["decode", "encode", "glob_escape", "number_text", "pack", "script_error"]

# Ops whose every argument is a key; ops that touch no key.
_ALL_KEYS: Final = frozenset({"delete", "mget", "copy_ttl"})
_NO_KEYS: Final = frozenset({"publish"})

_loads = json.loads


def number_text(amount: int | float) -> str:
    """``amount`` as the script reads it: decimal for ints, ``repr`` for floats."""
    return str(amount) if isinstance(amount, int) else repr(amount)


def _score(value: float, key: str) -> str:
    if math.isnan(value):
        raise InvalidValue(f"sorted set {key!r}: score must be a number, got NaN")
    return repr(value)


def _text(value: Any) -> str:
    # Ints (indices, counts, milliseconds) travel as decimal text, like everything else.
    return value if type(value) is str else str(value)


def _enc_incr(args: tuple[Any, ...]) -> list[str]:
    return [args[0], number_text(args[1])]


def _enc_hincr(args: tuple[Any, ...]) -> list[str]:
    return [args[0], args[1], number_text(args[2])]


def _enc_set(args: tuple[Any, ...]) -> list[str]:
    key, value, px, nx, xx, keepttl = args
    if px is None and not nx and not xx and not keepttl:
        return [key, value]  # the common case: two arguments mean a plain SET
    flags = ("n" if nx else "") + ("x" if xx else "") + ("k" if keepttl else "")
    return [key, value, flags or "-", "" if px is None else str(px)]


def _enc_require_equal(args: tuple[Any, ...]) -> list[str]:
    key, value = args
    return [key] if value is None else [key, value]  # no value argument: "must be missing"


def _enc_hset(args: tuple[Any, ...]) -> list[str]:
    key, mapping = args
    out = [key]
    for item in mapping.items():
        out += item
    return out


def _enc_zadd(args: tuple[Any, ...]) -> list[str]:
    key, mapping = args
    out = [key]
    for member, score in mapping.items():
        out += (_score(score, key), member)  # ZADD's order: score, member
    return out


def _enc_ints(args: tuple[Any, ...]) -> list[str]:
    return [_text(a) for a in args]


def _enc_zrange(args: tuple[Any, ...]) -> list[str]:
    key, start, stop, desc = args
    return [key, str(start), str(stop), "1" if desc else ""]


def _enc_zrangebyscore(args: tuple[Any, ...]) -> list[str]:
    key, low, high, desc, offset, count = args
    if offset < 0:  # Python slicing semantics: fetch all, slice on the way back
        offset, count = 0, None
    count = -1 if count is None else count
    return [key, _score(low, key), _score(high, key), "1" if desc else "", str(offset), str(count)]


_ENCODERS: Final[dict[str, Callable[[tuple[Any, ...]], list[str]]]] = {
    "set": _enc_set,
    "incr": _enc_incr,
    "hincr": _enc_hincr,
    "require_equal": _enc_require_equal,
    "hset": _enc_hset,
    "zadd": _enc_zadd,
    "pexpire": _enc_ints,
    "lrange": _enc_ints,
    "lindex": _enc_ints,
    "ltrim": _enc_ints,
    "zrange": _enc_zrange,
    "zrangebyscore": _enc_zrangebyscore,
}


def encode(ops: Sequence[Op], head: Sequence[str]) -> tuple[list[str], list[str], bool]:
    """The keys ``ops`` touch (each once, in order), the script's ``ARGV`` (``head``, then each
    op flat as name, argument count, arguments, all ``str``) and whether every result comes back
    as the script returns it (no op whose reply :func:`decode` converts).

    Raises:
        InvalidValue: a NaN score (Redis has no NaN scores).
    """
    keys: dict[str, None] = {}
    argv = list(head)
    plain = True
    for name, args in ops:
        encoder = _ENCODERS.get(name)
        fields = args if encoder is None else encoder(args)
        argv.append(name)
        argv.append(str(len(fields)))
        argv += fields
        if plain and name in _CONVERTED:
            plain = False
        if name in _NO_KEYS:
            continue
        if name in _ALL_KEYS:
            keys.update(dict.fromkeys(args))
        else:
            keys[args[0]] = None
    return list(keys), argv, plain


_FRAGMENTS: dict[str, str] = {}
"""RESP bulk headers+bodies of short arguments seen before (op names, counts, keys of hot sessions)."""
_FRAGMENT_MAX_LEN: Final = 64
_FRAGMENTS_MAX: Final = 4096


def pack(command: Sequence[str]) -> bytes:
    """``command`` as one RESP request (an array of bulk strings), UTF-8 encoded.

    One join and one encode for the whole request, and the bulk strings of short arguments
    are remembered: packing argument by argument was most of a small batch's client-side cost
    (``bench/session_ops.py``).
    """
    parts = [f"*{len(command)}\r\n"]
    known = _FRAGMENTS.get
    for arg in command:
        fragment = known(arg)
        if fragment is None:
            if type(arg) is not str:
                arg = str(arg)
            size = len(arg) if arg.isascii() else len(arg.encode())
            fragment = f"${size}\r\n{arg}\r\n"
            if size <= _FRAGMENT_MAX_LEN:
                if len(_FRAGMENTS) >= _FRAGMENTS_MAX:
                    _FRAGMENTS.clear()  # a bounded memo: hot arguments come back at once
                _FRAGMENTS[arg] = fragment
        parts.append(fragment)
    return "".join(parts).encode()


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


_CONVERTED: Final = frozenset({*_DECODERS, "zrangebyscore"})


def decode(ops: Sequence[Op], reply: str, plain: bool = False) -> BatchResult:
    """The :class:`BatchResult` of the script's JSON ``reply`` to ``ops``; ``plain`` (from
    :func:`encode`) says no result needs converting."""
    applied, raw = _loads(reply)
    if not isinstance(raw, list):
        raw = []
    if plain:
        return BatchResult(bool(applied), raw)
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
