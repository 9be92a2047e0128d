"""Shared memory's input rules have one home: its requests, checked once, the same error class and
message from the library's keyword methods and from every door (the registry's call, the CLI and
HTTP), on every engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from memstack import Memory
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import InvalidInput, InvalidKey, WaitTimeout
from memstack.foundation.limits import MAX_TTL_SECONDS
from memstack.ops import OPERATIONS, call
from memstack.ops.shared import MAX_WAIT
from memstack.tiers.shared import SharedMemory
from memstack.tiers.shared.requests import RULES, ReadKeys, SetIfVersion, SetKey, check_wait
from ops._refused import Refusals, driver, refusal, refusals  # noqa: F401 - the doors' fixtures


def _fill(mem: Memory) -> None:
    mem.shared("team", enable_cache=False)["plan"] = ["research"]


def _team(mem: Memory) -> SharedMemory:
    return mem.shared("team", enable_cache=False)


Keywords = Callable[[Memory], object]
_PUT = {"name": "team", "key": "plan", "value": 1}
# (operation, its request, the same call with the library's keyword method)
CASES: list[tuple[str, dict[str, Any], Keywords]] = [
    ("shared.put", {**_PUT, "key": "a\x01b"}, lambda m: _team(m).set("a\x01b", 1)),
    ("shared.put", {**_PUT, "key": "k" * 257}, lambda m: _team(m).set("k" * 257, 1)),
    ("shared.put", {**_PUT, "key": "cache"}, lambda m: _team(m).set("cache", 1)),
    ("shared.put", {**_PUT, "key": "data", "value": 5}, lambda m: _team(m).set("data", 5)),
    ("shared.put", {**_PUT, "subject": "who?"}, lambda m: _team(m).set("plan", 1, subject="who?")),
    ("shared.put", {**_PUT, "subject": "u" * 257}, lambda m: _team(m).set("plan", 1, subject="u" * 257)),
    ("shared.put", {**_PUT, "version": -1}, lambda m: _team(m).set_if("plan", 1, version=-1)),
    ("shared.put", {**_PUT, "version": 2**60}, lambda m: _team(m).set_if("plan", 1, version=2**60)),
    ("shared.put", {**_PUT, "version": 0}, lambda m: _team(m).set_if("plan", 1, version=0)),
    (
        "shared.put",
        {**_PUT, "key": "results", "value": [], "version": 1},
        lambda m: _team(m).set_if("results", [], version=1),
    ),
    ("shared.put", {**_PUT, "name": "n" * 129}, lambda m: m.shared("n" * 129).set("plan", 1)),
    ("shared.get", {"name": "team", "key": "plan", "wait": -1}, lambda m: _team(m).get("plan", wait=-1)),
    ("shared.get", {"name": "team", "key": "a\x01b"}, lambda m: _team(m).get("a\x01b")),
    ("shared.get", {"name": "bad name", "key": "plan"}, lambda m: m.shared("bad name")),
    ("shared.show", {"name": "n" * 129}, lambda m: m.shared("n" * 129)),
    ("shared.delete", {"name": "team", "key": "results"}, lambda m: _team(m).delete("results")),
    ("shared.delete", {"name": "team", "key": "a\x01b"}, lambda m: _team(m).delete("a\x01b")),
]


@pytest.mark.parametrize(
    ("name", "args", "keywords"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_a_bad_request_is_refused_alike_on_every_door(
    refusals: Refusals,  # noqa: F811
    name: str,
    args: dict[str, Any],
    keywords: Keywords,
) -> None:
    with Memory(tenant_engine(refusals.engine, "keywords")) as library:
        _fill(library)
        expected = refusal(lambda: keywords(library))
        assert _team(library).to_dict()["custom"] == {"plan": ["research"]}  # a refused call changes nothing
    found = refusals.every(name, args, _fill)
    assert len(found) >= 2  # the registry's call and HTTP at least
    for door, answer in found.items():
        assert answer == expected, door


def test_a_request_is_checked_once_and_applied_as_is(mem: Memory) -> None:
    board = _team(mem)
    assert board.put(SetKey.of("plan", ["a"], subject="u1")) == ["a"]
    assert board.put_if(SetIfVersion.of("plan", ["b"], version=1)) == 2
    assert board.read(ReadKeys.of("plan")) == ["b"]
    assert board.read(ReadKeys.of("plan", "gone", "plan")) == {"plan": ["b"]}
    assert board.put(SetKey.of("data", {"x": 1})) == {"x": 1}
    assert board.data["x"] == 1


def test_a_request_for_nothing_is_refused() -> None:
    with pytest.raises(InvalidInput, match="at least one key"):
        ReadKeys.of()
    with pytest.raises(InvalidKey, match="reserved"):
        SetIfVersion.of("messages", [], version=None)


@pytest.mark.parametrize(("wait", "timeout"), [(False, 0.0), (True, None), (0, 0.0), (2.5, 2.5)])
def test_a_wait_is_its_timeout(wait: Any, timeout: float | None) -> None:
    assert check_wait(wait) == timeout


@pytest.mark.parametrize("wait", [-1, MAX_TTL_SECONDS + 1, "1", None])
def test_a_wait_off_its_rule_is_refused(wait: Any) -> None:
    with pytest.raises(InvalidInput, match="wait"):
        check_wait(wait)


def test_a_door_waits_within_its_own_bound(mem: Memory) -> None:
    _fill(mem)
    with pytest.raises(InvalidInput, match="less than or equal to 60"):
        call(OPERATIONS["shared.get"], mem, {"name": "team", "key": "gone", "wait": MAX_WAIT + 1})
    with pytest.raises(WaitTimeout):
        call(OPERATIONS["shared.get"], mem, {"name": "team", "key": "gone", "wait": 0.01})


def test_the_doors_document_the_tiers_rules() -> None:
    put = OPERATIONS["shared.put"].request.model_json_schema()["properties"]
    assert put["version"]["minimum"] == 0
    assert put["version"]["description"] == RULES["version"].doc
    assert put["key"]["maxLength"] == 256
    assert put["name"]["maxLength"] == 128
    wait = OPERATIONS["shared.get"].request.model_json_schema()["properties"]["wait"]
    assert (wait["minimum"], wait["maximum"]) == (0, MAX_WAIT)
    lookup = OPERATIONS["cache.lookup"].request.model_json_schema()["properties"]
    assert lookup["name"]["description"] == RULES["name"].doc
