"""The seam's argument rules as a pure function: what ``check_ops`` accepts, refuses and says."""

from __future__ import annotations

import enum
import math

import pytest

from memstack.engines._checks import MAX_TTL_MS, check_ops
from memstack.foundation.errors import InvalidInput, InvalidValue, NotANumber

PLAIN_SET = ("set", ("k", "v", None, False, False, False))


class Color(enum.StrEnum):
    RED = "red"


def test_it_says_whether_a_batch_writes() -> None:
    assert not check_ops([])
    assert not check_ops([("get", ("k",)), ("require_exists", ("k",)), ("zrange", ("z", 0, -1, True))])
    assert check_ops([("require_missing", ("k",)), PLAIN_SET])
    assert check_ops([("publish", ("c", "m"))])


def test_ten_years_is_the_longest_ttl() -> None:
    assert MAX_TTL_MS == 315_576_000_000
    check_ops([("set", ("k", "v", MAX_TTL_MS, False, False, False)), ("pexpire", ("k", MAX_TTL_MS))])
    with pytest.raises(InvalidValue, match=r"set px=315576000001: a TTL must not exceed 10 years"):
        check_ops([("set", ("k", "v", MAX_TTL_MS + 1, False, False, False))])
    with pytest.raises(InvalidValue, match="pexpire ms=10000000000000000000000"):
        check_ops([("pexpire", ("k", 10**22))])
    check_ops([("pexpire", ("k", -(2**40)))])  # at or below zero still means "delete"


def test_messages_name_the_command_the_argument_and_the_rule() -> None:
    with pytest.raises(InvalidValue, match=r"hset argument 1: contains a lone surrogate '\\udc00' at"):
        check_ops([("hset", ("h", {"f\udc00": "v"}))])
    with pytest.raises(InvalidInput, match=r"lrange argument 2: 1\.0 is not an int"):
        check_ops([("lrange", ("l", 0, 1.0))])
    with pytest.raises(InvalidInput, match=r"ltrim: takes 3 arguments \(key, int, int\), got 2"):
        check_ops([("ltrim", ("l", 0))])
    with pytest.raises(InvalidInput, match=r"sadd: takes at least 1 arguments"):
        check_ops([("sadd", ())])
    with pytest.raises(NotANumber, match=r"incr by 9223372036854775808: .*64-bit"):
        check_ops([("incr", ("n", 2**63))])
    with pytest.raises(InvalidValue, match="finite"):
        check_ops([("hincr", ("h", "f", -math.inf))])
    with pytest.raises(InvalidValue, match="score is NaN"):
        check_ops([("zadd", ("z", {"m": math.nan}))])


def test_argument_errors_come_before_a_misplaced_guard() -> None:
    bad_value = ("set", ("k", "\ud800", None, False, False, False))
    with pytest.raises(InvalidValue):
        check_ops([PLAIN_SET, ("require_exists", ("k",)), bad_value])
    with pytest.raises(InvalidInput, match="guard 'require_exists' after a write"):
        check_ops([PLAIN_SET, ("require_exists", ("k",))])
    check_ops([PLAIN_SET, ("require_exists", ("k",))], guards_first=False)


def test_malformed_ops_are_invalid_input() -> None:
    for ops in ([("get",)], ["get"], [("get", "k")], [(["get"], ("k",))], [("get", ["k"])], [None]):
        with pytest.raises(InvalidInput):
            check_ops(ops)


def test_str_subclasses_and_non_ascii_text_pass() -> None:
    check_ops([("set", (Color.RED, "é€ 😀", None, False, False, False)), ("sadd", ("s", Color.RED, "\x00"))])
    with pytest.raises(InvalidValue, match="expected a string, got bytes"):
        check_ops([("get", (b"k",))])
