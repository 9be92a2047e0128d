"""Working memory's input rules have one home: the tier's requests, checked once, the same error on
the library's keywords and on the operations' doors, on every engine."""

from __future__ import annotations

from typing import Any

import pytest

from memstack import Memory
from memstack.foundation.errors import InvalidCategory, InvalidValue
from memstack.ops import OPERATIONS
from memstack.ops.run import call
from memstack.tiers.working.entry import MAX_CATEGORY_LENGTH
from memstack.tiers.working.requests import RULES, SearchEntries, SetEntry

_NS = "session/s1"


def _door_set(mem: Memory, **fields: Any) -> Any:
    return call(OPERATIONS["working.set"], mem, {"key": "k", "value": 1, "namespace": _NS, **fields})


@pytest.mark.parametrize("length", [MAX_CATEGORY_LENGTH + 1, 300])
def test_a_long_category_is_refused_alike_by_the_library_and_the_door(mem: Memory, length: int) -> None:
    category = "c" * length
    with pytest.raises(InvalidCategory) as library:
        mem.working(_NS).set("k", 1, category=category)
    with pytest.raises(InvalidCategory) as door:
        _door_set(mem, category=category)
    assert str(door.value) == str(library.value)
    assert mem.working(_NS).get("k") is None  # a failing call changes nothing


def test_the_longest_category_is_kept_by_both(mem: Memory) -> None:
    category = "c" * MAX_CATEGORY_LENGTH
    assert mem.working(_NS).set("a", 1, category=category).category == category
    assert _door_set(mem, key="b", category=category)["category"] == category


@pytest.mark.parametrize("ttl", [0, -1, 1e12])
def test_a_bad_ttl_is_refused_alike_by_the_library_and_the_door(mem: Memory, ttl: float) -> None:
    with pytest.raises(InvalidValue) as library:
        mem.working(_NS).set("k", 1, ttl=ttl)
    with pytest.raises(InvalidValue) as door:
        _door_set(mem, ttl=ttl)
    assert type(door.value) is type(library.value)
    assert str(door.value) == str(library.value)


def test_the_door_names_the_ttl_as_the_library_does(mem: Memory, clock: Any) -> None:
    entry = _door_set(mem, ttl=60)
    assert entry["expires_at"] != entry["stored_at"]
    assert "ttl_seconds" not in OPERATIONS["working.set"].fields
    assert "ttl" in OPERATIONS["working.set"].fields


def test_a_request_is_checked_once_and_applied_as_is(mem: Memory) -> None:
    request = SetEntry.of("k", {"v": 1}, ttl=1.5, category="a/b", tags=[" x "])
    assert (request.ttl_ms, request.category, request.tags) == (1500, "a/b", ("x",))
    stored = mem.working(_NS).put(request)
    assert (stored.key, stored.value, stored.tags) == ("session/s1/k", {"v": 1}, ("x",))
    assert mem.working(_NS).find(SearchEntries.of(tags=["x"])) == [mem.working(_NS).get("k")]


def test_a_bad_search_is_refused_alike(mem: Memory) -> None:
    with pytest.raises(InvalidValue) as library:
        mem.working(_NS).search("q", tags=["ok", " "])
    with pytest.raises(InvalidValue) as door:
        call(OPERATIONS["working.search"], mem, {"query": "q", "tags": ["ok", " "], "namespace": _NS})
    assert str(door.value) == str(library.value)


def test_the_door_documents_the_tiers_bounds() -> None:
    schema = OPERATIONS["working.set"].request.model_json_schema()["properties"]
    assert schema["category"]["maxLength"] == MAX_CATEGORY_LENGTH
    assert schema["category"]["description"] == RULES["category"].doc
    assert schema["ttl"]["exclusiveMinimum"] == 0
