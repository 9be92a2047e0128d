"""The long-term tier's write rules have one home: its save request (``SaveMemory``), checked
once, the same for a save, an update and each item of a batch. A bad value gets the same error
class and message from the keyword methods and from every door (the registry's call, HTTP, the
CLI, MCP), on every engine, and a refused call writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from memstack import Memory
from memstack.foundation.errors import InvalidCategory, InvalidKey, InvalidValue
from memstack.ops import OPERATIONS, call
from memstack.tiers.longterm.plan import plan_of
from memstack.tiers.longterm.requests import RULES, SaveMemory
from memstack.tiers.longterm.validate import MAX_CATEGORY_LENGTH
from ops._refused import DOORS, TOOL_DOORS, Refusals, driver, refusal, refusals  # noqa: F401 - the doors' fixtures

PAST = datetime(2000, 1, 1, tzinfo=UTC)
TOOLLESS = [door for door in DOORS if door not in TOOL_DOORS]
"""The doors of an operation without a tool (a save, a read or a delete of one id)."""

# (case, the keyword method's fields, the door's fields)
SAVES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("long category", {"category": "c" * 600}, {"category": "c" * 600}),
    ("category over the tier's limit", {"category": "c" * 300}, {"category": "c" * 300}),
    ("bad category", {"category": "../etc"}, {"category": "../etc"}),
    ("long id", {"id": "i" * 129}, {"id": "i" * 129}),
    ("blank content", {"content": "  \t "}, {"content": "  \t "}),
    ("long subject", {"subject": "u" * 257}, {"subject": "u" * 257}),
    ("zero ttl", {"ttl": 0}, {"ttl": 0}),
    ("ttl over ten years", {"ttl": 1e12}, {"ttl": 1e12}),
    ("ttl and expiry", {"ttl": 60, "expires_at": PAST}, {"ttl": 60, "expires_at": "2000-01-01T00:00:00Z"}),
    ("past expiry", {"expires_at": PAST}, {"expires_at": "2000-01-01T00:00:00Z"}),
    ("long tag", {"tags": ["t" * 257]}, {"tags": ["t" * 257]}),
    ("superseding itself", {"id": "a1", "supersedes": ["a1"]}, {"id": "a1", "supersedes": ["a1"]}),
    ("superseding a missing entry", {"supersedes": ["nope"]}, {"supersedes": ["nope"]}),
]


@pytest.mark.parametrize("door", TOOLLESS)
@pytest.mark.parametrize(("case", "keywords", "request_"), SAVES, ids=[s[0] for s in SAVES])
def test_a_bad_save_is_refused_alike_on_every_door(
    mem: Memory,
    refusals: Refusals,  # noqa: F811
    door: str,
    case: str,
    keywords: dict[str, Any],
    request_: dict[str, Any],
) -> None:
    expected = refusal(lambda: mem.long_term("alice").save(**{"content": "Alice plays jazz", **keywords}))
    fields = {"scope": "alice", "content": "Alice plays jazz", **request_}
    assert refusals.refuse(door, "memories.save", fields) == expected
    assert len(mem.long_term("alice")) == 0  # a failing call changes nothing


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize(("case", "keywords", "request_"), SAVES[:8], ids=[s[0] for s in SAVES[:8]])
def test_a_bad_batch_item_is_refused_alike_on_every_door(
    mem: Memory,
    refusals: Refusals,  # noqa: F811
    door: str,
    case: str,
    keywords: dict[str, Any],
    request_: dict[str, Any],
) -> None:
    # save_many checks each item with save's request: the same message, naming the item.
    single = refusal(lambda: mem.long_term("alice").save(**{"content": "Alice plays jazz", **keywords}))
    items = [{"content": "Alice plays the violin"}, {"content": "Alice plays jazz", **keywords}]
    expected = refusal(lambda: mem.long_term("alice").save_many(items))
    assert expected == (single[0], f"items[1]: {single[1]}")
    wire = [{"content": "Alice plays the violin"}, {"content": "Alice plays jazz", **request_}]
    assert refusals.refuse(door, "memories.save_many", {"scope": "alice", "items": wire}) == expected
    assert len(mem.long_term("alice")) == 0


@pytest.mark.parametrize("door", TOOLLESS)
@pytest.mark.parametrize(
    ("name", "fields"), [("memories.delete", {"id": "i" * 129}), ("memories.get", {"id": ".x"})]
)
def test_a_bad_id_or_scope_is_refused_alike_on_every_door(
    mem: Memory,
    refusals: Refusals,  # noqa: F811
    door: str,
    name: str,
    fields: dict[str, Any],
) -> None:
    for given in (fields, {**fields, "scope": "s" * 129}):
        scope = given.get("scope", "alice")
        method = "delete" if name == "memories.delete" else "get"
        expected = refusal(lambda: getattr(mem.long_term(scope), method)(given["id"]))  # noqa: B023
        assert refusals.refuse(door, name, {"scope": scope, **given}) == expected


def test_the_errors_are_the_tiers_own(mem: Memory) -> None:
    with pytest.raises(InvalidCategory, match="the limit is 256"):
        SaveMemory.of(content="x", category="c" * 600)
    with pytest.raises(InvalidKey, match="memory id"):
        SaveMemory.of(content="x", id="i" * 129)
    with pytest.raises(InvalidValue, match="ttl 0: must be a number of seconds > 0"):
        SaveMemory.of(content="x", ttl=0)
    with pytest.raises(InvalidValue, match="unknown field"):
        SaveMemory.of(content="x", colour="blue")  # type: ignore[call-arg]


def test_the_longest_values_are_kept_by_the_library_and_the_door(mem: Memory) -> None:
    category = "c" * MAX_CATEGORY_LENGTH
    assert mem.long_term("alice").save(content="a", category=category, id="i" * 128).category == category
    saved = call(OPERATIONS["memories.save"], mem, {"scope": "bob", "content": "b", "category": category})
    assert saved["category"] == category


def test_a_request_is_checked_once_and_applied_as_is(mem: Memory, clock: Any) -> None:
    request = SaveMemory.of(content="Alice plays jazz", id="A1", tags=" jazz, music ", ttl=60)
    assert (request.id, request.tags, request.ttl, request.expires_at) == (
        "a1",
        ("jazz", "music"),
        60.0,
        None,
    )
    stored = mem.long_term("alice").put(request)
    assert stored.expires_at is not None and stored.expires_at.timestamp() == pytest.approx(clock.now() + 60)
    # The clock decides only what depends on it: the same request planned later expires later.
    assert plan_of(request, clock.now() + 10).template.expires_at == datetime.fromtimestamp(
        clock.now() + 70, UTC
    )
    update = SaveMemory.of(content="Alice plays the violin", id="a1")
    assert mem.long_term("alice").put(update).content == "Alice plays the violin"
    assert [e.op for e in mem.long_term("alice").history("a1")] == ["create", "update"]


def test_the_door_documents_the_tiers_bounds() -> None:
    schema = OPERATIONS["memories.save"].request.model_json_schema()["properties"]
    assert schema["category"]["maxLength"] == MAX_CATEGORY_LENGTH  # the door allowed 512
    assert schema["category"]["description"] == RULES["category"].doc
    assert schema["ttl"]["exclusiveMinimum"] == 0
    item = OPERATIONS["memories.save_many"].request.model_json_schema()["$defs"]["MemoryItem"]["properties"]
    assert item["id"]["maxLength"] == 128 and item["id"]["description"] == RULES["save_id"].doc
