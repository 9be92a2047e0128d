"""The value limits every surface shares (``memstack.limits``)."""

from __future__ import annotations

import math

import pytest

from memstack.errors import InvalidValue
from memstack.limits import MAX_DEPTH, MAX_INT_DIGITS, check_json, check_text, encode_json


def nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def test_plain_json_passes_unchanged() -> None:
    value = {"a": [1, 2.5, "é", None, True, {"b": "ok"}]}
    assert check_json(value) is value
    assert encode_json(value) == '{"a":[1,2.5,"é",null,true,{"b":"ok"}]}'


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("\ud800", "lone surrogate"),
        ({"k": ["x", "a\udfffb"]}, "value['k'][1]"),
        ({"\ud800": 1}, "lone surrogate"),
        (math.nan, "finite"),
        ([math.inf], "value[0]"),
        ({1: "x"}, "not a string"),
        ({"s": {1, 2}}, "set is not JSON"),
        (10**5000, "digits"),
    ],
    ids=["surrogate", "nested-surrogate", "surrogate-key", "nan", "inf", "int-key", "set", "huge-int"],
)
def test_refusals_name_the_field_and_the_rule(value: object, fragment: str) -> None:
    with pytest.raises(InvalidValue) as info:
        encode_json(value)
    assert fragment in str(info.value)


def test_depth_limit_is_exact_and_never_a_recursion_error() -> None:
    check_json(nested(MAX_DEPTH))
    with pytest.raises(InvalidValue, match="deeper than"):
        check_json(nested(MAX_DEPTH + 1))
    with pytest.raises(InvalidValue, match="deeper than"):
        encode_json(nested(100_000))


def test_int_digit_limit_is_exact() -> None:
    check_json(int("9" * MAX_INT_DIGITS))
    with pytest.raises(InvalidValue, match="digits"):
        check_json(10**MAX_INT_DIGITS)


def test_a_cycle_is_refused() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(InvalidValue):
        encode_json(cycle)


def test_size_limit_counts_utf8_bytes() -> None:
    assert encode_json("é" * 10, max_bytes=22) == '"' + "é" * 10 + '"'
    with pytest.raises(InvalidValue, match="exceed"):
        encode_json("é" * 11, max_bytes=22)


def test_check_text_names_the_field() -> None:
    assert check_text("fine", "content") == "fine"
    with pytest.raises(InvalidValue, match=r"^content: "):
        check_text("bad\ud800", "content")
    with pytest.raises(InvalidValue, match="expected a string"):
        check_text(3, "content")
