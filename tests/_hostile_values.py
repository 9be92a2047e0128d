"""The values of the hostile-input fuzz (``tests/test_hostile_inputs.py``) and how they are drawn.

A drawn call is hostile with probability :data:`HOSTILE_CALLS`; each argument of a hostile call
is then a value from :data:`HOSTILE` with probability :data:`HOSTILE_RATE` (else a well-formed
value of its kind), so that calls with many arguments also run well formed. Hostile values: lone
surrogates, NaN and infinities, huge ints, nesting 5,000 deep, text past the limits, objects that
are not JSON, wrong types, control characters, subclasses of the JSON types.
"""

from __future__ import annotations

import math
import random
from collections import OrderedDict
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from memstack.foundation.limits import MAX_VALUE_BYTES

HOSTILE_CALLS = 0.8
HOSTILE_RATE = 0.35


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


class Level(IntEnum):
    """An int subclass: JSON-encodable as its number."""

    HIGH = 3


class Label(str):
    """A str subclass: JSON-encodable as its text."""

    __slots__ = ()


class Opaque:
    """An object that is not JSON, with a stable repr."""

    def __repr__(self) -> str:
        return "Opaque()"


NESTED = _nested(5000)
HUGE_TEXT = "x" * (MAX_VALUE_BYTES + 1)
HOSTILE: tuple[Any, ...] = (
    "\ud800",
    "ok\udfffok",
    ["a", "\ud800"],
    {"k": "\udc00"},
    {"\ud800": 1},
    math.nan,
    math.inf,
    -math.inf,
    10**20,
    10**30,
    -(10**30),
    10**5000,
    -1,
    0,
    NESTED,
    {"deep": NESTED},
    HUGE_TEXT,
    [HUGE_TEXT],
    Opaque(),
    {1, 2},
    b"bytes",
    (1, 2),
    {1: "x"},
    True,
    None,
    "",
    "   ",
    3.5,
    [],
    {},
    "nul\x00byte",
    "\x7f\x1b[31m",
    1e308,
    -0.0,
    Level.HIGH,
    Label("label"),
    OrderedDict(b=1, a=[2]),
)
HOSTILE_KEYS: tuple[Any, ...] = tuple(v for v in HOSTILE if getattr(v, "__hash__", None) is not None)
"""The hashable hostile values: keys of a mapping."""
WAITS: tuple[Any, ...] = (False, 0, math.nan, math.inf, -1, 10**30, 10**5000, "1", None)
"""``wait`` values of a shared-memory read: each returns at once or is refused, never blocks."""

VALUES: tuple[Any, ...] = ("hello", "123", 7, 2.5, None, True, {"a": [1, "é", {"b": None}]}, ["x", 1])
TEXTS: tuple[str, ...] = ("hello world", "notes about cats", "é ü 漢字 😀", "the meeting is at noon")


@dataclass(frozen=True)
class Call:
    """One drawn call: its operation name, its arguments, and whether any of them is hostile."""

    op: str
    args: tuple[Any, ...]
    hostile: bool


@dataclass
class Draw:
    """Argument drawing for one call: remembers whether a hostile value was drawn."""

    rng: random.Random
    hostile: bool = False

    def __post_init__(self) -> None:
        self.rate = HOSTILE_RATE if self.rng.random() < HOSTILE_CALLS else 0.0

    def pick(self, *good: Any, pool: tuple[Any, ...] = HOSTILE) -> Any:
        if self.rng.random() < self.rate:
            self.hostile = True
            return self.rng.choice(pool)
        return self.rng.choice(good)
