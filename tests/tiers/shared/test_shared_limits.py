"""Shared memory applies the shared rules (``memstack.foundation.limits``): values, keys, names, waits."""

from __future__ import annotations

import math

import pytest

from memstack import Memory
from memstack.foundation.errors import InvalidInput, InvalidValue
from memstack.foundation.limits import MAX_VALUE_BYTES


def test_values_and_keys_follow_the_shared_rule(mem: Memory) -> None:
    with mem.shared("net", enable_cache=False) as shared:
        shared.set("k", "old")
        deep: object = 1
        for _ in range(5000):
            deep = [deep]
        for key, value, message in (
            ("k", {"a": "\ud800"}, r"^value\['a'\]: contains a lone surrogate"),
            ("k", deep, "deeper than 100 levels"),
            ("k", 10**5000, "more than 4000 digits"),
            ("k", "x" * MAX_VALUE_BYTES, "exceed the limit of 1048576 bytes"),
            ("k\ud800", 1, r"^key: contains a lone surrogate"),
        ):
            with pytest.raises(InvalidValue, match=message):
                shared.set(key, value)
        with pytest.raises(InvalidValue, match=r"^correlation_id: contains a lone surrogate"):
            shared.set("k", 1, correlation_id="\ud800")
        with pytest.raises(InvalidValue, match=r"^session_id: contains a lone surrogate"):
            shared.session_id = "\udfff"
        with pytest.raises(InvalidValue, match=r"^data\['x'\]: contains a lone surrogate"):
            shared.data.x = "\ud800"
        with pytest.raises(InvalidValue, match=r"^version: .* is not an int from 0"):
            shared.set_if("k", 1, version=10**30)
        assert shared.get("k") == "old"
        assert shared.keys() == ["k"]
        assert shared.session_id is None
        assert shared.data.to_dict() == {}


def test_appends_cannot_grow_a_value_past_the_limit(mem: Memory) -> None:
    with mem.shared("net", enable_cache=False) as shared:
        half = "x" * (MAX_VALUE_BYTES * 6 // 10)
        shared.append_result(half)
        with pytest.raises(InvalidValue, match="results: the value would exceed the limit"):
            shared.append_result(half)
        assert shared.results == [half]


@pytest.mark.parametrize(
    "wait", [math.nan, math.inf, -1, 10**30, 10**5000, "1"], ids=["nan", "inf", "neg", "1e30", "huge", "str"]
)
def test_waits_are_bounded(mem: Memory, wait: object) -> None:
    with (
        mem.shared("net", enable_cache=False) as shared,
        pytest.raises(InvalidInput, match=r"^wait .*: must be False, True or a number of seconds"),
    ):
        shared.get("missing", wait=wait)  # type: ignore[arg-type]  # the wrong values under test


def test_writer_names_are_text(mem: Memory) -> None:
    with pytest.raises(InvalidValue, match=r"^writer: contains a lone surrogate"):
        mem.shared("net", writer="w\ud800")


def test_membership_of_a_key_that_can_never_be_stored_is_false(mem: Memory) -> None:
    with mem.shared("net", enable_cache=False) as shared:
        assert "k\ud800" not in shared
        assert 10**5000 not in shared
