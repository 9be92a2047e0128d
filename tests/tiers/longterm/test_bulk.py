"""save_many: the checks, history and change log of save, in batches that apply whole or not at all,
on every engine."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from memstack.engines import Engine
from memstack.foundation.errors import EntryNotFound, InvalidCategory, InvalidKey, InvalidValue
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory, MemoryEntry
from memstack.tiers.longterm.layout import ScopeKeys


def test_saves_every_item_as_save_would(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    saved = lt.save_many(
        [
            {"content": "likes green tea", "tags": ["drink"], "id": "t1"},
            {"content": "lives in Lisbon", "category": "facts/home", "metadata": {"since": 2019}},
            MemoryEntry(id="e3", content="plays the cello", tags=["music"]),
        ],
        batch_size=2,
    )
    assert [e.content for e in saved] == ["likes green tea", "lives in Lisbon", "plays the cello"]
    assert saved[0].id == "t1" and saved[2].id == "e3" and len(lt) == 3
    assert lt.get(saved[1].id) == saved[1]
    assert saved[1].category == "facts/home" and saved[1].metadata == {"since": 2019}
    assert [h.entry.id for h in lt.search("cello")] == ["e3"]
    history = lt.history("t1")
    assert [(h.op, h.actor) for h in history] == [("create", "api")]
    # a reader's warm cache follows the change log of a bulk write too
    reader = LongTermMemory(engine, "u")
    assert len(reader.search("tea")) == 1
    lt.save_many([{"id": "t1", "content": "likes black coffee"}], actor="import")
    assert [h.entry.id for h in reader.search("coffee")] == ["t1"] and not reader.search("tea")
    assert [(h.op, h.actor) for h in lt.history("t1")] == [("create", "api"), ("update", "import")]


def test_an_update_keeps_what_save_keeps(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    first = lt.save(id="a", content="old text", valid_from=datetime(2020, 1, 1, tzinfo=UTC))
    engine.clock.advance(5)  # type: ignore[attr-defined]  # the tests' ManualClock
    (again,) = lt.save_many([{"id": "A", "content": "new text"}])
    assert again.created_at == first.created_at and again.valid_from == first.valid_from
    assert again.updated_at is not None and again.updated_at > first.created_at


def test_supersedes_inside_the_batch(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    lt.save(id="lisbon", content="lives in Lisbon")
    lt.save_many([{"id": "berlin", "content": "lives in Berlin", "supersedes": ["lisbon"]}])
    old = lt.get("lisbon")
    assert old is not None and old.superseded_by == "berlin"
    assert [h.entry.id for h in lt.search("lives")] == ["berlin"]
    assert [h.op for h in lt.history("lisbon")] == ["create", "supersede"]


def test_expiry_is_kept_and_cleared_as_save_does(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    lt.save_many(
        [{"id": "brief", "content": "short lived fact", "ttl": 10}, {"id": "long", "content": "fact"}]
    )
    keys = ScopeKeys.of(engine, "u")
    assert [member for member, _ in engine.zrange(keys.expiry, 0, -1)] == ["brief"]
    engine.clock.advance(11)  # type: ignore[attr-defined]  # the tests' ManualClock
    assert [h.entry.id for h in lt.search("fact")] == ["long"]
    lt.save_many([{"id": "brief", "content": "short lived fact again"}])  # no expiry any more
    assert engine.zrange(keys.expiry, 0, -1) == []


@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        ({"content": "  "}, InvalidValue, "items[2]: content"),
        ({"content": "x", "category": "a//b"}, InvalidCategory, "items[2]"),
        ({"content": "x", "id": "no spaces!"}, InvalidKey, "items[2]"),
        ({"content": "x", "colour": "red"}, InvalidValue, "items[2]: unknown field(s) colour"),
        ("just text", InvalidValue, "items[2]"),
        ({"content": "x", "supersedes": ["ghost"]}, EntryNotFound, "items[2]: supersedes 'ghost'"),
        ({"content": "x", "id": "k0"}, InvalidValue, "already saved or superseded by items[0]"),
    ],
)
def test_a_bad_item_fails_its_whole_batch(engine: Engine, bad: object, error: type, words: str) -> None:
    lt = LongTermMemory(engine, "u")
    lt.save(id="kept", content="untouched")
    items = [{"id": "k0", "content": "zero"}, {"content": "one"}, bad, {"content": "three"}]
    with pytest.raises(error, match=re.escape(words)):
        lt.save_many(items)  # type: ignore[arg-type]  # the bad item is the point
    assert [e.id for e in lt.entries()] == ["kept"]
    assert lt.history("k0") == []


def test_batches_before_a_failure_stay_saved(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    items: list[dict[str, object]] = [{"id": f"e{n}", "content": f"entry {n}"} for n in range(5)]
    items[3] = {"id": "e3", "content": ""}
    with pytest.raises(InvalidValue, match=r"items\[3\]") as caught:
        lt.save_many(items, batch_size=2)
    assert sorted(e.id for e in lt.entries()) == ["e0", "e1"]
    assert "the 2 items before items[2] were saved" in caught.value.__notes__


def test_the_arguments_are_checked(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    for size in (0, 10_001, True, 2.0):
        with pytest.raises(InvalidValue, match="batch_size"):
            lt.save_many([{"content": "x"}], batch_size=size)  # type: ignore[arg-type]
    with pytest.raises(InvalidValue, match="actor"):
        lt.save_many([{"content": "x"}], actor="bad actor!")
    assert len(lt) == 0 and lt.save_many([]) == []


def test_progress_counts_each_batch(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    seen: list[int] = []
    lt.save_many(({"content": f"entry {n}"} for n in range(7)), batch_size=3, progress=seen.append)
    assert seen == [3, 3, 1] and len(lt) == 7


def test_vectors_are_computed_for_a_bulk_write(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u", embedder=FakeEmbedder(32))
    lt.save_many([{"id": f"e{n}", "content": f"topic {n} words"} for n in range(70)])
    assert lt.flush_embeddings(30)
    assert len(engine.hkeys(ScopeKeys.of(engine, "u").vectors)) == 70
    assert lt.search("topic 7 words")[0].entry.id == "e7"
