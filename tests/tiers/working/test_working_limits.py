"""Working memory applies the shared rules (``memstack.foundation.limits``): values, TTLs, tags, queries."""

from __future__ import annotations

import math

import pytest

from memstack import Memory
from memstack.foundation.errors import InvalidCategory, InvalidValue
from memstack.foundation.limits import MAX_TTL_SECONDS


@pytest.mark.parametrize(
    "ttl",
    [10**20, MAX_TTL_SECONDS + 1, -1, math.nan, 10**5000],
    ids=["1e20", "over", "negative", "nan", "huge"],
)
def test_ttls_past_ten_years_are_refused_naming_ttl(mem: Memory, ttl: float) -> None:
    wm = mem.working("session/abc")
    with pytest.raises(InvalidValue, match=r"^ttl: .*\(10 years\)$"):
        wm.set("k", "v", ttl=ttl)
    assert wm.list() == []


def test_the_longest_ttl_is_accepted(mem: Memory) -> None:
    wm = mem.working("session/abc")
    entry = wm.set("k", "v", ttl=MAX_TTL_SECONDS)
    assert entry.expires_at - entry.stored_at == pytest.approx(MAX_TTL_SECONDS)


def test_values_follow_the_shared_rule(mem: Memory) -> None:
    wm = mem.working("session/abc")
    wm.set("k", "old")
    for value, message in (
        ({"a": "\ud800"}, r"^value\['a'\]: contains a lone surrogate"),
        ({1: "x"}, r"^value: object key 1 is not a string"),
        ([math.inf], r"^value\[0\]: inf is not a finite number"),
        (10**5000, r"^value: an integer of more than 4000 digits"),
    ):
        with pytest.raises(InvalidValue, match=message):
            wm.set("k", value)
    assert wm.get("k").value == "old"  # type: ignore[union-attr]  # set above


def test_deep_values_are_refused_not_a_recursion_error(mem: Memory) -> None:
    deep: object = 1
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(InvalidValue, match="deeper than 100 levels"):
        mem.working("session/abc").set("k", deep)


def test_tags_name_their_index(mem: Memory) -> None:
    wm = mem.working("session/abc")
    with pytest.raises(InvalidValue, match=r"^tags\[1\]: contains a lone surrogate"):
        wm.set("k", 1, tags=["ok", "b\udc00d"])
    with pytest.raises(InvalidValue, match=r"^tags\[0\]: a tag of 257 characters, the limit is 256"):
        wm.set("k", 1, tags=["t" * 257])
    with pytest.raises(InvalidValue, match=r"^tags: must be a list of strings, got bytes"):
        wm.set("k", 1, tags=b"ab")  # type: ignore[arg-type]  # the wrong type under test
    assert wm.list() == []


def test_categories_are_bounded(mem: Memory) -> None:
    wm = mem.working("session/abc")
    wm.set("k", 1, category="a" * 256)
    with pytest.raises(InvalidCategory, match="257 characters, the limit is 256"):
        wm.set("k2", 1, category="a" * 257)


@pytest.mark.parametrize(
    ("field", "kwargs"), [("query", {"query": "x\ud800"}), ("category", {"category": "\udfff"})]
)
def test_search_strings_with_lone_surrogates_are_refused(
    mem: Memory, field: str, kwargs: dict[str, str]
) -> None:
    wm = mem.working("session/abc")
    wm.set("k", "hello")
    with pytest.raises(InvalidValue, match=rf"^{field}: contains a lone surrogate"):
        wm.search(**kwargs)  # type: ignore[arg-type]  # keyword arguments of the parametrisation
    with pytest.raises(InvalidValue, match=r"^query: expected a string, got int"):
        wm.search(query=5)  # type: ignore[arg-type]  # the wrong type under test
