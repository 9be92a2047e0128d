"""The session tier's input rules have one home: its requests, checked once, the same error class
and message from the library's keyword methods and from every door (the registry's call, the CLI,
HTTP, the agent tools' route and MCP), on every engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from memstack import Memory
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import InvalidValue
from memstack.ops import OPERATIONS, call
from memstack.tiers.session.requests import (
    MAX_TTL_HOURS,
    RULES,
    CreateSession,
    Increment,
    PutValue,
    ReadHistory,
    check_hours,
)
from memstack.tiers.session.store import SessionStore
from ops._refused import Refusals, driver, refusal, refusals  # noqa: F401 - the doors' fixtures


def _fill(mem: Memory) -> None:
    mem.sessions.create("s1")
    mem.sessions.put("s1", "k", {"v": 1})
    mem.sessions.increment("s1", "n", 2)


Keywords = Callable[[SessionStore], object]
# (operation, its request, the same call with the library's keyword method). No bad value: a door
# reading JSON text (the CLI) refuses a value too deep before the tier sees it, naming its argument.
CASES: list[tuple[str, dict[str, Any], Keywords]] = [
    ("sessions.create", {"session_id": "bad id!"}, lambda s: s.create("bad id!")),
    ("sessions.create", {"session_id": "s" * 129}, lambda s: s.create("s" * 129)),
    ("sessions.create", {"session_id": "s9", "ttl_hours": -1}, lambda s: s.create("s9", ttl_hours=-1)),
    ("sessions.create", {"session_id": "s9", "ttl_hours": 1e9}, lambda s: s.create("s9", ttl_hours=1e9)),
    ("sessions.create", {"session_id": "s9", "subject": "who?"}, lambda s: s.create("s9", subject="who?")),
    (
        "sessions.create",
        {"session_id": "s9", "subject": "u" * 257},
        lambda s: s.create("s9", subject="u" * 257),
    ),
    ("sessions.create", {"session_id": "s1"}, lambda s: s.create("s1")),
    (
        "sessions.put",
        {"session_id": "s1", "key": "__meta__", "value": 1, "create": True},
        lambda s: s.put("s1", "__meta__", 1),
    ),
    (
        "sessions.put",
        {"session_id": "s1", "key": "k" * 257, "value": 1, "create": True},
        lambda s: s.put("s1", "k" * 257, 1),
    ),
    (
        "sessions.increment",
        {"session_id": "s1", "key": "n", "amount": 2**64},
        lambda s: s.increment("s1", "n", 2**64),
    ),
    (
        "sessions.increment",
        {"session_id": "s1", "key": "k", "amount": 1},
        lambda s: s.increment("s1", "k", 1),
    ),
    (
        "sessions.increment",
        {"session_id": "s1", "key": "a b", "amount": 1},
        lambda s: s.increment("s1", "a b", 1),
    ),
    ("sessions.history", {"session_id": "s1", "limit": 2**60}, lambda s: s.history("s1", 2**60)),
    ("sessions.history", {"session_id": "s" * 129}, lambda s: s.history("s" * 129)),
    ("sessions.get", {"session_id": "s1", "key": "__keys__"}, lambda s: s.get("s1", "__keys__")),
    ("sessions.get", {"session_id": "s1", "key": "gone"}, lambda s: s.get("s1", "gone")),
    ("sessions.clear", {"session_id": "s1", "key": "a b"}, lambda s: s.clear("s1", "a b")),
    ("sessions.delete", {"session_id": "nope"}, lambda s: s.delete("nope")),
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
    library = Memory(tenant_engine(refusals.engine, "keywords"))
    _fill(library)
    expected = refusal(lambda: keywords(library.sessions))
    assert library.sessions.list() == ["s1"]  # a refused call changes nothing
    assert library.sessions.items("s1") == {"k": {"v": 1}, "n": 2}
    library.close()
    found = refusals.every(name, args, _fill)
    assert len(found) >= 2  # the registry's call and HTTP at least
    for door, answer in found.items():
        assert answer == expected, door


def test_a_bad_value_creates_no_session(mem: Memory) -> None:
    deep: Any = 1
    for _ in range(101):
        deep = [deep]
    put = {"session_id": "s1", "key": "k", "value": deep, "create": True, "subject": "u1"}
    with pytest.raises(InvalidValue, match="nested deeper than 100"):
        call(OPERATIONS["sessions.put"], mem, put)
    assert mem.sessions.list() == []  # the session is created only for a value it can hold
    assert call(OPERATIONS["sessions.put"], mem, {**put, "value": 1})["value"] == 1
    assert mem.sessions.items("s1") == {"k": 1}


def test_a_request_is_checked_once_and_applied_as_is(mem: Memory) -> None:
    mem.sessions.start(CreateSession.of("s1", ttl_hours=2, subject="u1"))
    mem.sessions.write(PutValue.of("s1", "k", {"v": 1}))
    assert mem.sessions.add(Increment.of("s1", "n", 2.5)) == 2.5
    assert [e["op"] for e in mem.sessions.recent(ReadHistory.of("s1", 0))] == ["put", "increment"]
    assert mem.sessions.recent(ReadHistory.of("s1", 1))[0]["op"] == "increment"
    assert mem.sessions.get("s1", "k") == {"v": 1}


@pytest.mark.parametrize("hours", [0, 1.5, MAX_TTL_HOURS])
def test_the_ttl_bounds_are_the_tiers(hours: float) -> None:
    assert check_hours(hours) == hours
    assert CreateSession.of("s", ttl_hours=hours).ttl_hours == hours


@pytest.mark.parametrize("hours", [-0.5, MAX_TTL_HOURS + 1, True, "1"])
def test_a_ttl_off_its_bounds_is_refused(hours: Any) -> None:
    with pytest.raises(InvalidValue, match="ttl_hours"):
        CreateSession.of("s", ttl_hours=hours)


def test_the_doors_document_the_tiers_rules() -> None:
    create = OPERATIONS["sessions.create"].request.model_json_schema()["properties"]
    assert create["ttl_hours"]["maximum"] == MAX_TTL_HOURS
    assert create["ttl_hours"]["description"] == RULES["ttl_hours"].doc
    assert create["session_id"]["maxLength"] == 128
    history = OPERATIONS["sessions.history"].request.model_json_schema()["properties"]
    assert history["limit"]["description"] == RULES["limit"].doc
    put = OPERATIONS["sessions.put"].request.model_json_schema()["properties"]
    assert put["key"]["maxLength"] == 256
