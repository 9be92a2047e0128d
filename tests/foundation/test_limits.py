"""The value limits every surface shares (``memstack.foundation.limits``)."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstack.foundation.errors import InvalidValue
from memstack.foundation.limits import (
    MAX_AMOUNT,
    MAX_COUNT,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    MAX_TTL_SECONDS,
    bad_segment,
    check_amount,
    check_int,
    check_json,
    check_text,
    check_ttl,
    encode_json,
    one_line,
    short_repr,
)


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


# -- the fast path of encode_json agrees with check_json -------------------------------------------
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(),  # NaN and infinities included: refused
    st.text(alphabet=st.sampled_from(["a", "é", "\ud800", "\udfff", "😀"]), max_size=6),
    st.sampled_from([10**4001, (1, 2), b"x", {1, 2}]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=4), st.integers(0, 3)), inner, max_size=4),
    ),
    max_leaves=20,
)


@given(value=_values)
def test_encode_json_refuses_exactly_what_check_json_refuses(value: object) -> None:
    try:
        check_json(value)
    except InvalidValue:
        with pytest.raises(InvalidValue):
            encode_json(value)
        return
    assert json.loads(encode_json(value)) == json.loads(json.dumps(value, ensure_ascii=False))


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
def test_fast_path_depth_matches_the_walk(depth: int) -> None:
    value = {"a": nested(depth - 1)} if depth else 1
    if depth <= MAX_DEPTH:
        encode_json(value)
    else:
        with pytest.raises(InvalidValue, match=r"value\['a'\].*deeper than 100"):
            encode_json(value)


def test_tuples_can_be_refused() -> None:
    assert encode_json((1, 2)) == "[1,2]"
    with pytest.raises(InvalidValue, match=r"value\[1\]: tuple is not JSON"):
        encode_json([1, (2,)], allow_tuples=False)


def test_check_text_size_counts_utf8_bytes() -> None:
    assert check_text("éé", "t", max_bytes=4) == "éé"
    with pytest.raises(InvalidValue, match=r"^t: 6 bytes of text exceed the limit of 4 bytes$"):
        check_text("ééé", "t", max_bytes=4)


# -- TTLs, counts and amounts ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "ttl",
    [-1, math.nan, math.inf, 10**20, MAX_TTL_SECONDS + 1, 10**5000, True, "5", None],
    ids=["negative", "nan", "inf", "1e20", "ten-years-and-1s", "huge-int", "bool", "str", "none"],
)
def test_unusable_ttls_are_refused_naming_the_field(ttl: object) -> None:
    with pytest.raises(InvalidValue, match=r"^lease: .* \(10 years\)$"):
        check_ttl(ttl, "lease", allow_zero=True)


def test_ttl_range_is_inclusive_and_zero_is_opt_in() -> None:
    assert check_ttl(MAX_TTL_SECONDS) == MAX_TTL_SECONDS
    assert check_ttl(0.001) == 0.001
    assert check_ttl(0, allow_zero=True) == 0
    with pytest.raises(InvalidValue, match=r"^ttl: 0 is not a number of seconds greater than 0"):
        check_ttl(0)


def test_counts_are_bounded_ints() -> None:
    assert check_int(MAX_COUNT, "n") == MAX_COUNT
    assert check_int(-5, "n", minimum=-10) == -5
    for bad in (MAX_COUNT + 1, -1, 1.0, True, "1", 10**5000):
        with pytest.raises(InvalidValue, match=r"^n: .* is not an int from 0 to"):
            check_int(bad, "n")


def test_amounts_fit_a_signed_64_bit_counter() -> None:
    assert check_amount(MAX_AMOUNT) == MAX_AMOUNT
    assert check_amount(-0.5) == -0.5
    for bad in (MAX_AMOUNT + 1, -(10**30), 1e19, math.nan, math.inf, True, "1", None):
        with pytest.raises(InvalidValue, match=r"^amount: "):
            check_amount(bad)


def test_short_repr_survives_huge_and_broken_values() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert short_repr("abc") == "'abc'"
    assert short_repr(10**5000) == "an integer of about 5001 digits"
    assert short_repr("x" * 1000).endswith("...") and len(short_repr("x" * 1000)) == 300
    assert short_repr(Broken()) == "<Broken object>"


def test_bad_segment_names_the_first_segment_the_rule_refuses() -> None:
    rule = re.compile(r"[a-z]+")
    assert bad_segment("a/b/c", rule) is None
    assert bad_segment("a/B1/c/D", rule) == "B1"
    assert bad_segment("a//b", rule) == ""


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("content '  ': must be a non-blank string", "content '  ': must be a non-blank string"),
        ("first line\n  second\r\nthird\u2028fourth", "first line second third fourth"),
        ("\n trailing \n", "trailing"),
    ],
)
def test_one_line_breaks_lines_and_keeps_quoted_spaces(text: str, shown: str) -> None:
    assert one_line(text) == shown
