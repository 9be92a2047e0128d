"""The session tier's input rules (pure)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstack.foundation.errors import InvalidKey, InvalidSessionId, InvalidValue
from memstack.tiers.session.validate import (
    KEY_RULE,
    check_amount,
    check_key,
    check_session_id,
    encode_entry,
    encode_value,
    put_entry,
    ttl_ms,
)


@pytest.mark.parametrize("sid", ["a", "A-b_9", "x" * 128])
def test_valid_session_ids(sid: str) -> None:
    assert check_session_id(sid) == sid


@pytest.mark.parametrize("sid", ["", "x" * 129, "abc\n", "a b", "a.b", "a:b", "é", None, 5, b"abc"])
def test_invalid_session_ids_name_value_and_rule(sid: object) -> None:
    with pytest.raises(InvalidSessionId) as info:
        check_session_id(sid)
    assert str(info.value) == (
        f"Invalid session_id: {sid!r}. Must be 1-128 alphanumeric characters, hyphens, or underscores."
    )
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("key", ["k", "a.b-c_d", "y" * 256, "__key__"])
def test_valid_keys(key: str) -> None:
    assert check_key(key) == key


@pytest.mark.parametrize("key", ["", "y" * 257, "abc\n", "a/b", "a:b", "{x}", None])
def test_invalid_keys(key: object) -> None:
    with pytest.raises(InvalidKey, match=r"^Invalid key: .*Must be 1-256 alphanumeric characters, hyphens"):
        check_key(key)


@pytest.mark.parametrize("key", ["__keys__", "__history__", "__meta__"])
def test_reserved_keys(key: str) -> None:
    with pytest.raises(InvalidKey, match="Reserved"):
        check_key(key)


@pytest.mark.parametrize(
    "value", [{1, 2}, object(), math.nan, math.inf, {"a": -math.inf}, {1: "x"}, [{"ok": 1, 2: 3}], b"x"]
)
def test_non_json_values_are_refused(value: object) -> None:
    with pytest.raises(InvalidValue):
        encode_value(value)


@pytest.mark.parametrize(
    "value", [{"a": [{"b": {"c": [1, {2: "deep"}]}}]}, [[[{None: 1}]]], ({"t": ({1.5: 0},)},)]
)
def test_non_string_keys_are_found_at_any_depth(value: object) -> None:
    with pytest.raises(InvalidValue, match=r"key .* is not a string"):
        encode_value(value)


@given(
    key=st.from_regex(KEY_RULE, fullmatch=True),
    timestamp=st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(2**60), 2**60)),
)
def test_put_entry_is_the_encoders_text(key: str, timestamp: float) -> None:
    assert put_entry(key, timestamp) == encode_entry({"op": "put", "key": key, "timestamp": timestamp})


def test_circular_value_is_refused() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(InvalidValue):
        encode_value(loop)


def test_value_size_limit() -> None:
    assert encode_value("x" * 10, max_bytes=12) == '"xxxxxxxxxx"'
    with pytest.raises(InvalidValue, match="exceed the limit of 11 bytes"):
        encode_value("x" * 10, max_bytes=11)


@pytest.mark.parametrize("amount", [True, "1", None, math.nan, math.inf])
def test_bad_amounts(amount: object) -> None:
    with pytest.raises(InvalidValue):
        check_amount(amount)


def test_ttl_rounding_is_the_seeds() -> None:
    assert ttl_ms(None) is None
    assert ttl_ms(0) is None
    assert ttl_ms(0.0001) == 1
    assert ttl_ms(0.0000001) == 1
    assert ttl_ms(1.5) == 1500
    assert ttl_ms(0.0001 * 3600) == math.ceil(0.0001 * 3600 * 1000)
    with pytest.raises(InvalidValue):
        ttl_ms(-1)
