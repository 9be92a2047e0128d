"""Pure encoding of seam batches for the Redis script, and decoding of its replies.

No I/O here: :func:`encode` turns ops into ``(keys, argv)`` for ``EVALSHA`` and :func:`pack`
into the bytes of one request; :func:`decode`
turns the script's JSON reply back into the Python values the memory engine returns;
:func:`script_error` maps the script's error replies to memstack errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from ...foundation.errors import EngineError, EngineUnavailable, InvalidInput, NotANumber
from .._checks import check_ops
from ..base import BatchResult, Op, WrongType
from ..commands import COMMANDS
from .dedupe import WITHDRAWN

__all__ = ["decode", "encode", "glob_escape", "number_text", "pack", "script_error"]

# Ops whose every argument is a key; ops that touch no key (from the command table).
_ALL_KEYS: Final = frozenset(n for n, c in COMMANDS.items() if c.keys == "all")
_NO_KEYS: Final = frozenset(n for n, c in COMMANDS.items() if c.keys == "none")

_loads = json.loads


def number_text(amount: int | float) -> str:
    """``amount`` as the script reads it: decimal for ints, ``repr`` for floats."""
    return str(amount) if isinstance(amount, int) else repr(amount)


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
        out += (repr(score), member)  # ZADD's order: score, member
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
    return [key, repr(low), repr(high), "1" if desc else "", str(offset), str(count)]


_ENCODER_NAMES: Final[dict[str, Callable[[tuple[Any, ...]], list[str]]]] = {
    "set": _enc_set,
    "incr": _enc_incr,
    "hincr": _enc_hincr,
    "require_equal": _enc_require_equal,
    "hset": _enc_hset,
    "zadd": _enc_zadd,
    "ints": _enc_ints,
    "zrange": _enc_zrange,
    "zrangebyscore": _enc_zrangebyscore,
}
# The table names each command's encoder; a name the codec lacks fails at import.
_ENCODERS: Final = {n: _ENCODER_NAMES[c.encoder] for n, c in COMMANDS.items() if c.encoder is not None}


def encode(
    ops: Sequence[Op], head: Sequence[str], *, checked: bool = False
) -> tuple[list[str], list[str], bool]:
    """The keys ``ops`` touch (each once, in order), the script's ``ARGV`` (``head``, then each
    op flat as name, argument count, arguments, all ``str``) and whether every result comes back
    as the script returns it (no op whose reply :func:`decode` converts).

    The ops are checked first (``engines._checks``): the Redis engine's ``execute`` encodes every
    batch here, so a batch the seam refuses never reaches the server. (A guard after a write is
    refused by the script, before it writes: :func:`script_error` maps it to InvalidInput.)
    ``checked``: the caller ran ``check_ops(ops, guards_first=False)`` itself.

    Raises:
        InvalidInput: a malformed op (see :func:`~memstack.engines._checks.check_ops`).
        InvalidValue: a NaN score, text with a lone surrogate, a TTL out of range...
        NotANumber: an int increment outside 64 bits.
    """
    if not checked:
        check_ops(ops, guards_first=False)
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


def _number(value: Any, args: tuple[Any, ...]) -> int | float:
    text: str = value
    body = text[1:] if text[:1] == "-" else text
    return int(text) if body.isdigit() else float(text)


def _strings(value: Any, args: tuple[Any, ...]) -> list[Any]:
    return value if isinstance(value, list) else []


def _hash(value: Any, args: tuple[Any, ...]) -> dict[str, str]:
    if not isinstance(value, list):
        return {}
    return dict(zip(value[::2], value[1::2], strict=True))


def _set(value: Any, args: tuple[Any, ...]) -> set[str]:
    return set(value) if isinstance(value, list) else set()


def _pairs(value: Any, args: tuple[Any, ...]) -> list[tuple[str, float]]:
    if not isinstance(value, list):
        return []
    return [(m, float(s)) for m, s in zip(value[::2], value[1::2], strict=True)]


def _paged_pairs(value: Any, args: tuple[Any, ...]) -> list[tuple[str, float]]:
    pairs = _pairs(value, args)
    offset, count = args[4], args[5]
    if offset < 0:  # the encoder fetched everything: page it with Python's slicing
        end = None if count is None or count < 0 else offset + count
        pairs = pairs[offset:end]
    return pairs


def _score_or_none(value: Any, args: tuple[Any, ...]) -> float | None:
    return None if value is None else float(value)


_DECODER_NAMES: Final[dict[str, Callable[[Any, tuple[Any, ...]], Any]]] = {
    "number": _number,
    "strings": _strings,
    "hash": _hash,
    "set": _set,
    "score": _score_or_none,
    "pairs": _pairs,
    "paged_pairs": _paged_pairs,
}
# The table names each command's reply decoder; a name the codec lacks fails at import.
_DECODERS: Final = {n: _DECODER_NAMES[c.reply] for n, c in COMMANDS.items() if c.reply is not None}
_CONVERTED: Final = frozenset(_DECODERS)


def decode(ops: Sequence[Op], reply: str, plain: bool = False) -> BatchResult:
    """The :class:`BatchResult` of the script's JSON ``reply`` to ``ops``; ``plain`` (from
    :func:`encode`) says no result needs converting.

    Raises:
        EngineUnavailable: the reply is a retry's, and a forget withdrew it (the batch was applied
            once; its results are gone).
    """
    if reply == WITHDRAWN:
        raise EngineUnavailable(
            "a write batch was applied, but its reply was lost and a forget withdrew the copy a retry "
            "reads (it may have held forgotten data): the results are unknown, the batch is not applied again"
        )
    applied, raw = _loads(reply)
    if not isinstance(raw, list):
        raw = []
    if plain:
        return BatchResult(bool(applied), raw)
    results: list[Any] = []
    for (name, args), value in zip(ops, raw, strict=False):
        decoder = _DECODERS.get(name)
        results.append(value if decoder is None else decoder(value, args))
    return BatchResult(bool(applied), results)


def script_error(message: str) -> Exception:
    """The memstack error for an error reply of the script (``EngineError`` if unknown)."""
    kind, _, detail = message.partition(" ")
    if kind == "MSWRONGTYPE":
        key, actual, wanted = _loads(detail)
        return WrongType(f"key {key!r} holds a {actual}, not a {wanted}")
    if kind == "MSGUARD":
        return InvalidInput(f"guard {detail} after a write: guards must come first in a batch")
    if kind == "MSNAN":
        key, field, why = _loads(detail)
        label = key if field is None else f"{key}.{field}"
        return NotANumber(f"cannot increment {label!r}: {why}")
    return EngineError(f"redis script failed: {message}")


def glob_escape(text: str) -> str:
    """``text`` with the glob characters of Redis ``MATCH`` escaped, so it matches literally."""
    return "".join("\\" + c if c in "\\*?[]" else c for c in text)
