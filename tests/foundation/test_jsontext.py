"""``foundation.jsontext``: the depth scan on the text agrees with the depth rule on the parsed value."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstack.foundation.errors import InvalidValue
from memstack.foundation.jsontext import check_depth, loads
from memstack.foundation.limits import check_json

# Strings full of what could fool a scanner: brackets, quotes, backslashes, escapes.
_TRICKY = st.text(alphabet='[]{}"\\/ auü\n\t', max_size=8)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TRICKY,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TRICKY, inner, max_size=3),
    max_leaves=12,
)


def _too_deep(value: Any, max_depth: int) -> bool:
    try:
        check_json(value, "v", max_depth=max_depth)
    except InvalidValue:
        return True
    return False


@given(_JSON, st.integers(min_value=0, max_value=5), st.booleans())
def test_the_scan_agrees_with_check_json(value: Any, max_depth: int, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=None if ascii_only else 1)
    scan_refuses = False
    try:
        check_depth(text, "v", max_depth=max_depth)
    except InvalidValue:
        scan_refuses = True
    assert scan_refuses == _too_deep(value, max_depth)


def test_deep_text_is_refused_without_recursion() -> None:
    for text in ("[" * 100_000, "[" * 5000 + "]" * 5000, '{"a":' * 5000 + "1" + "}" * 5000):
        with pytest.raises(InvalidValue, match="VALUE: nested deeper than 100 levels"):
            loads(text, "VALUE")
    assert loads("[" * 100 + "]" * 100, "VALUE") is not None


@pytest.mark.parametrize(
    ("text", "or_text", "expected"),
    [
        ('{"a": 1}', False, {"a": 1}),
        ("{bad", True, "{bad"),
        ("NaN", True, "NaN"),
        ("-Infinity", True, "-Infinity"),
        ('"unterminated', True, '"unterminated'),
    ],
)
def test_loads_or_text(text: str, or_text: bool, expected: Any) -> None:
    assert loads(text, "VALUE", or_text=or_text) == expected


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{bad", r"VALUE: not JSON \(Expecting property name"),
        ("NaN", r"VALUE: not JSON \(NaN is not a JSON number"),
        ('"\\ud800"', "VALUE: contains a lone surrogate"),
        ('{"\\udfff": 1}', "VALUE key"),
        ("9" * 4500, "VALUE: an integer of more than 4000 digits"),
        ("9" * 4001, "VALUE: an integer of more than 4000 digits"),
        ("1e999", "VALUE: inf is not a finite number"),
    ],
)
def test_loads_refuses_with_the_field_name(text: str, match: str) -> None:
    with pytest.raises(InvalidValue, match=match):
        loads(text, "VALUE")
    if "not JSON" not in match:  # JSON past a limit is never taken as text
        with pytest.raises(InvalidValue, match=match):
            loads(text, "VALUE", or_text=True)
