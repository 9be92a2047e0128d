"""The seam's argument rules, checked before a batch's first write, identically on every engine.

:func:`check_ops` is pure and runs at the top of every engine's ``execute`` (callers may hand
``execute`` raw ops, not only ops built by ``Commands``). A batch it refuses reaches no engine, so
nothing of it is applied, and every engine refuses it with the same typed error:

* text (keys, values, fields, members, channels, messages) is a ``str`` that encodes as UTF-8
  (no lone surrogates) → :class:`InvalidValue`;
* ints are ``int`` (not ``bool``) within 64 bits (:class:`InvalidValue`); flags are ``bool``;
  the op's shape and argument count match the table → :class:`InvalidInput`;
* a ``set`` TTL (``px``) is 1 ms to :data:`MAX_TTL_MS`; a ``pexpire`` above :data:`MAX_TTL_MS` is
  refused (``<= 0`` still deletes) → :class:`InvalidValue`;
* an increment is a finite number (:class:`InvalidValue`) and an int increment fits 64 bits
  (:class:`NotANumber`, as an overflowing sum);
* a score is a number, never NaN (``±inf`` allowed, as Redis) → :class:`InvalidValue`;
* guards come before the batch's first write → :class:`InvalidInput`.

What only the storage knows (key types, stored numbers, a counter's overflow) is each engine's
to check before its first write (or to undo completely).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

from ..foundation.errors import InvalidInput, InvalidValue, MemstackError, NotANumber
from ..foundation.limits import check_text
from ._semantics import INT64_MAX, INT64_MIN
from .commands import COMMANDS, Command

__all__ = ["MAX_TTL_MS", "check_ops"]

MAX_TTL_MS: Final = 10 * 36525 * 86_400_000 // 100
"""The longest TTL a key can get: 10 years (Julian), in milliseconds."""

_READ, _WRITE, _GUARD = 0, 1, 2
_TEXTUAL: Final = frozenset({"key", "text"})

ArgCheck = Callable[[Any, str, int], None]


def _where(name: str, index: int) -> str:
    return f"{name} argument {index}"


def _text(value: Any, name: str, index: int) -> None:
    if value.__class__ is str and value.isascii():
        return
    check_text(value, _where(name, index))


def _opt_text(value: Any, name: str, index: int) -> None:
    if value is not None:
        _text(value, name, index)


def _int(value: Any, name: str, index: int) -> None:
    if value.__class__ is not int:
        raise InvalidInput(f"{_where(name, index)}: {value!r} is not an int")
    if not INT64_MIN <= value <= INT64_MAX:
        raise InvalidValue(f"{_where(name, index)}: {value} is outside the 64-bit integer range")


def _opt_int(value: Any, name: str, index: int) -> None:
    if value is not None:
        _int(value, name, index)


def _bool(value: Any, name: str, index: int) -> None:
    if value is not True and value is not False:
        raise InvalidInput(f"{_where(name, index)}: {value!r} is not a bool")


def _px(value: Any, name: str, index: int) -> None:
    if value is None:
        return
    if value.__class__ is not int:
        raise InvalidInput(f"{name} px={value!r}: a TTL is an int number of milliseconds")
    if value <= 0:
        raise InvalidValue(f"{name} px={value!r}: a TTL must be a positive number of milliseconds")
    if value > MAX_TTL_MS:
        raise InvalidValue(f"{name} px={value!r}: a TTL must not exceed 10 years ({MAX_TTL_MS} ms)")


def _ms(value: Any, name: str, index: int) -> None:
    if value.__class__ is not int:
        raise InvalidInput(f"{name} ms={value!r}: a TTL is an int number of milliseconds")
    if value < INT64_MIN:
        raise InvalidValue(f"{name} ms={value}: outside the 64-bit integer range")
    if value > MAX_TTL_MS:
        raise InvalidValue(f"{name} ms={value!r}: a TTL must not exceed 10 years ({MAX_TTL_MS} ms)")


def _amount(value: Any, name: str, index: int) -> None:
    cls = value.__class__
    if cls is int:
        if not INT64_MIN <= value <= INT64_MAX:
            raise NotANumber(f"{name} by {value}: the increment is outside the 64-bit integer range")
    elif cls is float:
        if not math.isfinite(value):
            raise InvalidValue(f"{name} by {value!r}: the increment must be a finite number")
    else:
        raise InvalidValue(f"{name} by {value!r}: the increment must be a finite int or float")


def _score(value: Any, name: str, index: int) -> None:
    cls = value.__class__
    if cls is float:
        if value != value:  # NaN: Redis has no NaN scores, so no engine stores one
            raise InvalidValue(f"{_where(name, index)}: a score is NaN; scores must be numbers")
    elif cls is int:
        if not INT64_MIN <= value <= INT64_MAX:
            raise InvalidValue(f"{_where(name, index)}: score {value} is outside the 64-bit range")
    else:
        raise InvalidValue(f"{_where(name, index)}: score {value!r} is not a number")


def _mapping(of: str, check_value: ArgCheck) -> ArgCheck:
    """The check of a ``dict`` of text keys to values that pass ``check_value``."""

    def check(value: Any, name: str, index: int) -> None:
        if value.__class__ is not dict:
            raise InvalidInput(f"{_where(name, index)}: expected a dict of {of}, got {type(value).__name__}")
        for item, inner in value.items():
            _text(item, name, index)
            check_value(inner, name, index)

    return check


_ARG: Final[dict[str, ArgCheck]] = {
    "key": _text,
    "text": _text,
    "text?": _opt_text,
    "int": _int,
    "int?": _opt_int,
    "bool": _bool,
    "px?": _px,
    "ms": _ms,
    "amount": _amount,
    "score": _score,
    "fields": _mapping("fields", _text),
    "scores": _mapping("scores", _score),
}


def _arity(command: Command, args: Any) -> NoReturn:
    if args.__class__ is not tuple:
        raise InvalidInput(f"{command.name}: arguments must be a tuple, got {type(args).__name__}")
    want = f"at least {len(command.args) - 1}" if command.variadic else str(len(command.args))
    raise InvalidInput(f"{command.name}: takes {want} arguments ({', '.join(command.args)}), got {len(args)}")


_Spec = tuple[int, int, bool, Command, "Callable[[Any], None] | None"]
_SET_ARGS: Final = ("key", "text", "px?", "bool", "bool", "bool")


def _how(kind: str) -> ArgCheck | None:
    """None: text (checked inline); else the kind's checker (a flag's is inlined too)."""
    return None if kind in _TEXTUAL else _ARG[kind]


def _check_set(args: Any) -> None:
    # The arguments (key, text, px?, bool, bool, bool) written out: ``set`` is in every put.
    key, value, px, nx, xx, keepttl = args
    if key.__class__ is not str or not key.isascii():
        _text(key, "set", 0)
    if value.__class__ is not str or not value.isascii():
        _text(value, "set", 1)
    if px is not None:
        _px(px, "set", 2)
    if nx.__class__ is not bool or xx.__class__ is not bool or keepttl.__class__ is not bool:
        for i in (3, 4, 5):
            _bool(args[i], "set", i)


def _spec(command: Command) -> _Spec:
    """How :func:`check_ops` checks one command: its kind code, fixed argument count, whether
    more may follow, and the check of its arguments (None: every argument is text, checked
    inline, since most ops of every put are keys and text only)."""
    code = {"read": _READ, "write": _WRITE, "guard": _GUARD}[command.kind]
    kinds = [a.removesuffix("*") for a in command.args]
    variadic = command.variadic
    n = len(kinds) - variadic
    if all(k in _TEXTUAL for k in kinds):
        return code, n, variadic, command, None
    if command.args == _SET_ARGS:
        return code, n, variadic, command, _check_set
    name = command.name
    # Text and flags inline, the rest through its checker: a call per argument cost more than
    # the checks themselves.
    fixed = [(i, _how(k)) for i, k in enumerate(kinds[:n])]
    rest = _ARG[kinds[-1]] if variadic else None

    def check(args: Any) -> None:
        for i, how in fixed:
            arg = args[i]
            if how is None:
                if arg.__class__ is not str or not arg.isascii():
                    _text(arg, name, i)
            elif how is _bool:
                if arg is not True and arg is not False:
                    _bool(arg, name, i)
            else:
                how(arg, name, i)
        if rest is not None:
            for i in range(n, len(args)):
                rest(args[i], name, i)

    return code, n, variadic, command, check


_SPECS: Final = {name: _spec(command) for name, command in COMMANDS.items()}


def _text_args(args: tuple[Any, ...], name: str) -> None:
    for i, arg in enumerate(args):
        _text(arg, name, i)


def check_ops(ops: Sequence[Any], *, guards_first: bool = True) -> bool:
    """Refuse ``ops`` unless every op is well-formed under the table; True if any op writes.

    Pure and cheap: it runs on every ``execute`` of every engine. ``guards_first=False`` leaves
    the order of guards to the caller (the Redis script checks it itself, before any write).

    Raises:
        InvalidInput: an unknown command, a malformed op, a wrong argument count or type, a
            guard after a write.
        InvalidValue: text with a lone surrogate, a TTL out of range, a NaN score, a non-finite
            increment, an int outside 64 bits.
        NotANumber: an int increment outside 64 bits.
    """
    write = False
    misplaced = None
    try:
        for name, args in ops:
            spec = _SPECS.get(name)
            if spec is None:
                raise InvalidInput(f"unknown command {name!r}: not in the seam's command table")
            code, n, variadic, command, check = spec
            if args.__class__ is not tuple or (len(args) < n if variadic else len(args) != n):
                _arity(command, args)
            if check is None:
                for arg in args:
                    if arg.__class__ is not str or not arg.isascii():
                        _text_args(args, name)
                        break
            else:
                check(args)
            if code == _WRITE:
                write = True
            elif code == _GUARD and write and misplaced is None:
                misplaced = name
    except MemstackError:
        raise
    except (TypeError, ValueError) as exc:  # an op that is not a (name, args) pair
        raise InvalidInput(f"malformed op in batch: ops are (name, args) pairs ({exc})") from None
    # After every argument check, so every engine (the Redis script checks the order itself)
    # names the same first problem.
    if misplaced is not None and guards_first:
        raise InvalidInput(f"guard {misplaced!r} after a write: guards must come first in a batch")
    return write
