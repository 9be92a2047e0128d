"""The session tier applies the shared value rules (``memstack.foundation.limits``), naming the field."""

from __future__ import annotations

import math

import pytest

from memstack import Memory
from memstack.foundation.errors import InvalidValue


def _nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("a\ud800", r"^value: contains a lone surrogate"),
        ({"k": ["x", "\udfff"]}, r"^value\['k'\]\[1\]: contains a lone surrogate"),
        ({"\ud800": 1}, r"^value key '\\ud800': contains a lone surrogate"),
        (_nested(5000), r"deeper than 100 levels"),
        (10**5000, r"^value: an integer of more than 4000 digits"),
        (math.nan, r"^value: nan is not a finite number"),
    ],
    ids=["surrogate", "nested-surrogate", "surrogate-key", "deep", "huge-int", "nan"],
)
def test_hostile_values_are_refused_and_nothing_is_written(mem: Memory, value: object, message: str) -> None:
    mem.sessions.create("s")
    with pytest.raises(InvalidValue, match=message):
        mem.sessions.put("s", "k", value)
    assert mem.sessions.keys("s") == []
    assert mem.sessions.history("s") == []


@pytest.mark.parametrize(
    "amount", [10**30, -(10**30), 2**63, 1e19, 10**5000], ids=["1e30", "-1e30", "2**63", "1e19f", "huge"]
)
def test_huge_increments_are_refused(mem: Memory, amount: float) -> None:
    mem.sessions.create("s")
    with pytest.raises(InvalidValue, match=r"^amount: .* magnitude at most 2\*\*63-1"):
        mem.sessions.increment("s", "n", amount)
    assert mem.sessions.increment("s", "n", 2**62) == 2**62
    assert mem.sessions.history("s")[0]["amount"] == 2**62


@pytest.mark.parametrize(
    "limit", [10**30, 10**5000, "5", 2.5, None], ids=["1e30", "huge", "str", "float", "none"]
)
def test_history_limits_are_ints(mem: Memory, limit: object) -> None:
    mem.sessions.create("s")
    with pytest.raises(InvalidValue, match=r"^limit: "):
        mem.sessions.history("s", limit)  # type: ignore[arg-type]  # the wrong types under test


def test_ttl_hours_are_named_as_given(mem: Memory) -> None:
    with pytest.raises(InvalidValue, match=r"^session TTL \(ttl_hours\): an integer of about 5001 digits"):
        mem.sessions.create("s", ttl_hours=10**5000)
    with pytest.raises(InvalidValue, match=r"^session TTL \(ttl_hours\): 'x' is not a number of hours"):
        mem.sessions.create("s", ttl_hours="x")  # type: ignore[arg-type]  # the wrong type under test
    assert mem.sessions.list() == []


def test_replace_history_names_the_entry(mem: Memory) -> None:
    mem.sessions.create("s")
    mem.sessions.put("s", "k", 1)
    with pytest.raises(InvalidValue, match=r"^entries\[1\]\['note'\]: contains a lone surrogate"):
        mem.sessions.replace_history("s", [{"op": "x"}, {"note": "\ud800"}])
    assert [e["op"] for e in mem.sessions.history("s")] == ["put"]
