"""The filter language itself (pure): parsing and its errors, JSON equality, and answers from
postings equal to testing every record, for random filters through random changes."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstack.foundation.errors import InvalidFilter
from memstack.search.filter_ast import AllOf, Condition
from memstack.search.filter_eval import canonical, json_equal, matches
from memstack.search.filters import MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH, FieldSet, combine, parse_filter
from memstack.tiers.longterm.entry import MemoryEntry
from memstack.tiers.longterm.filter_index import FilterIndex
from memstack.tiers.longterm.query import LONG_TERM_FIELDS, builtin_of

VALUES = FieldSet("tests", {"when": "time", "name": "text"}, "value", False)


def test_empty_filters_filter_nothing() -> None:
    assert parse_filter(None, VALUES) is None and parse_filter({}, VALUES) is None
    assert combine(None, None) is None


def test_equal_filters_have_equal_keys_and_true_is_not_one() -> None:
    a = parse_filter({"x": 1, "y": {"$in": ["a"]}}, VALUES)
    b = parse_filter({"x": {"$eq": 1}, "y": {"$in": ("a",)}}, VALUES)
    c = parse_filter({"x": True, "y": {"$in": ["a"]}}, VALUES)
    assert a is not None and b is not None and c is not None
    assert a.key == b.key != c.key


def test_the_parse_tree() -> None:
    flt = parse_filter({"a": {"$gt": 1, "$lt": 5}, "$not": {"b.c": "x"}, "$name": "n"}, VALUES)
    assert flt is not None and flt.builtins
    assert isinstance(flt.root, AllOf) and len(flt.root.parts) == 3
    first = flt.root.parts[0]
    assert isinstance(first, AllOf) and first.parts[0] == Condition("$gt", 1, path=("a",))
    when = parse_filter({"$when": {"$gte": "2026-01-01T00:00:00Z"}}, VALUES)
    assert when is not None and when.root == Condition("$gte", 1767225600.0, "when", "time")


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("kind", "object"),
        ({1: "x"}, "field name"),
        ({"x": {"$foo": 1}}, r"operator '\$foo' on field 'x'"),
        ({"x": {"$in": "ab"}}, r"'x' \$in"),
        ({"x": {"$gt": None}}, r"'x' \$gt"),
        ({"x": {"$gt": True}}, r"'x' \$gt"),
        ({"x": {"$exists": "yes"}}, r"\$exists"),
        ({"x": {"$eq": object()}}, "not a JSON value"),
        ({"x": {"$eq": {1: 2}}}, "object key"),
        ({"x": {"$gt": 1, "y": 2}}, "mixes operators"),
        ({"": 1}, "Invalid filter key ''"),
        ({"a.": 1}, "Invalid filter key 'a.'"),
        ({"$when": {"$gt": "soon"}}, r"\$when"),
        ({"$when": {"$gt": datetime(2026, 1, 1)}}, "timezone-aware"),
        ({"$when": {"$contains": 1}}, r"\$contains"),
        ({"$name": {"$gt": 3}}, r"\$name"),
        ({"x": {"$gt": datetime.now(UTC)}}, "time field"),
        ({"$other": 1}, r"\$other.*\$when"),
        ({"$and": {"x": 1}}, r"\$and"),
        ({"$not": [1]}, r"\$not"),
    ],
)
def test_bad_filters_are_refused_naming_what_is_wrong(raw: Any, named: str) -> None:
    with pytest.raises(InvalidFilter, match=named):
        parse_filter(raw, VALUES)


def test_filters_are_bounded() -> None:
    deep: dict[str, Any] = {"x": 1}
    for _ in range(MAX_FILTER_DEPTH + 1):
        deep = {"$not": deep}
    with pytest.raises(InvalidFilter, match="nested"):
        parse_filter(deep, VALUES)
    wide = {f"f{n}": n for n in range(MAX_FILTER_CONDITIONS + 1)}
    with pytest.raises(InvalidFilter, match="conditions"):
        parse_filter(wide, VALUES)
    with pytest.raises(InvalidFilter, match="too large"):
        parse_filter({"x": 10**400}, VALUES)


def test_json_equality() -> None:
    assert json_equal(1, 1.0) and not json_equal(True, 1) and not json_equal(0, False)
    assert json_equal([1, {"a": 2.0}], (1.0, {"a": 2})) and not json_equal([1], [1, 2])
    assert not json_equal(math.nan, math.nan) and not json_equal("1", 1) and json_equal(None, None)
    assert canonical(2.0) == canonical(2) != canonical(True) and hash(canonical({"a": [1, None]}))


def test_time_operands_and_values() -> None:
    flt = parse_filter({"$when": {"$gte": datetime(2026, 1, 1, tzinfo=UTC), "$lt": 1767225660}}, VALUES)
    assert flt is not None
    assert matches(flt, {}, lambda name: 1767225600.0)
    assert not matches(flt, {}, lambda name: 1767225660.0)


# -- postings answer what testing every entry answers ----------------------------------------
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TAGS = ["Music", "music", "work", "home"]
CATEGORIES = [None, "people", "people/alice", "People/Bob", "peoplex"]
METADATA = [None, {"k": 1}, {"k": True}, {"k": "1", "j": [1, 2]}, {"j": [2]}, {"k": None}, {"k": 1.0, "j": 3}]


def _entry(rng: random.Random, n: int) -> MemoryEntry:
    return MemoryEntry(
        id=f"e{n}",
        content=rng.choice(["alpha beta", "beta gamma", "gamma"]),
        category=rng.choice(CATEGORIES),
        tags=tuple(rng.sample(TAGS, rng.randrange(3))),
        created_at=T0 + timedelta(seconds=rng.randrange(50)),
        metadata=rng.choice(METADATA),
    )


def _condition(rng: random.Random) -> dict[str, Any]:
    when = (T0 + timedelta(seconds=rng.randrange(50))).timestamp()
    return rng.choice(
        [
            {"category": rng.choice(["people", "PEOPLE/alice", "work"])},
            {"category": {"$in": ["people/bob", "peoplex"]}},
            {"tags": {"$contains": rng.sample(["music", "WORK", "home"], rng.randrange(1, 3))}},
            {"tags": {"$in": ["home", "work"]}},
            {"created_at": {rng.choice(["$gt", "$gte", "$lt", "$lte", "$eq"]): when}},
            {"id": {"$in": [f"e{rng.randrange(60)}", "zz"]}},
            {"k": rng.choice([1, True, "1", None, {"$ne": 1}, {"$in": [1, "1"]}, {"$exists": True}])},
            {"j": rng.choice([[1, 2], {"$in": [2]}, {"$contains": 2}, 3, {"$gt": 2}])},
            {"content": {"$contains": "beta"}},
        ]
    )


def _random_filter(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    roll = rng.random()
    if depth < 2 and roll < 0.15:
        return {"$or": [_random_filter(rng, depth + 1) for _ in range(rng.randrange(1, 3))]}
    if depth < 2 and roll < 0.25:
        return {"$not": _random_filter(rng, depth + 1)}
    if depth < 2 and roll < 0.35:
        return {"$and": [_random_filter(rng, depth + 1) for _ in range(2)]}
    merged: dict[str, Any] = {}
    for _ in range(rng.randrange(1, 3)):
        merged.update(_condition(rng))
    return merged


def test_postings_answer_what_testing_every_entry_answers() -> None:
    rng = random.Random(20261126)
    index, live = FilterIndex(), {}
    for step in range(2500):
        if live and rng.random() < 0.3:
            gone = rng.choice(sorted(live))
            index.remove(gone)
            del live[gone]
        else:
            new = _entry(rng, rng.randrange(60))
            index.add(new)
            live[new.id] = new
        if step % 5 == 0:
            raw = _random_filter(rng)
            flt = parse_filter(raw, LONG_TERM_FIELDS)
            assert flt is not None
            expected = {i for i, e in live.items() if matches(flt, e.metadata or {}, builtin_of(e))}
            assert index.allowed(flt) == expected, raw


def test_a_remembered_filter_does_not_follow_its_source() -> None:
    raw: dict[str, Any] = {"tags": ["a", "b"]}
    first = parse_filter(raw, VALUES)
    raw["tags"].append("c")  # the caller changes its dict after the search
    again = parse_filter({"tags": ["a", "b"]}, VALUES)
    assert first is again and first is not None and matches(first, {"tags": ["a", "b"]})
    assert parse_filter(raw, VALUES) != first
