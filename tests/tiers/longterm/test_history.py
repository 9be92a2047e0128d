"""The history of a long-term entry on every engine: each change with its versions and actor, kept in
the change's own batch, deleted with the entry, scrubbed of a forgotten subject."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import InvalidKey, InvalidValue
from memstack.tiers.longterm import history as history_module
from memstack.tiers.longterm.history import HistoryEvent, event_json
from memstack.tiers.longterm.index_cache import clear_caches


def test_every_change_is_kept_with_old_and_new(mem: Memory, clock: ManualClock) -> None:
    memories = mem.long_term("u")
    first = memories.save(id="pet", content="Has a cat", tags=["pets"])
    clock.advance(60)
    second = memories.save(id="pet", content="Has a cat and a dog", actor="tool")
    clock.advance(60)
    memories.restore(replace(second, content="Has two dogs"))
    events = memories.history("PET")  # ids are case-insensitive
    assert [(e.op, e.actor) for e in events] == [("create", "api"), ("update", "tool"), ("update", "import")]
    assert events[0].old is None and events[0].new == first
    assert events[1].old == first and events[1].new == second
    assert events[2].old == second and events[2].new is not None and events[2].new.content == "Has two dogs"
    assert [e.at.timestamp() for e in events] == sorted(e.at.timestamp() for e in events)
    assert events[1].at == second.updated_at


def test_json_shape(mem: Memory) -> None:
    memories = mem.long_term("u")
    saved = memories.save(content="Likes tea")
    (event,) = memories.history(saved.id)
    data = event_json(event)
    assert list(data) == ["at", "op", "actor", "old", "new", "related_ids"]
    assert data["op"] == "create" and data["old"] is None and data["related_ids"] == []
    assert data["new"]["content"] == "Likes tea" and data["new"]["valid_from"] == data["new"]["created_at"]
    assert isinstance(data["at"], str) and data["at"].endswith("Z")


def test_unknown_ids_and_bad_actors(mem: Memory) -> None:
    memories = mem.long_term("u")
    assert memories.history("never-saved") == []
    with pytest.raises(InvalidKey, match="memory id"):
        memories.history("../etc")
    with pytest.raises(InvalidValue, match="actor"):
        memories.save(content="x", actor="")
    with pytest.raises(InvalidValue, match="actor"):
        memories.save(content="x", actor="dream pass")
    assert len(memories) == 0


def test_delete_removes_the_history_with_the_entry(mem: Memory) -> None:
    memories = mem.long_term("u")
    saved = memories.save(content="Secret fact")
    other = memories.save(content="Other fact")
    assert memories.delete(saved.id)
    assert memories.history(saved.id) == []
    assert not mem.engine.exists(memories.keys.history(saved.id))
    assert memories.delete_many([other.id]) == 1 and memories.history(other.id) == []


def test_the_history_is_capped(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_module, "HISTORY_MAX", 3)
    memories = mem.long_term("u")
    for n in range(5):
        memories.save(id="counter", content=f"count {n}")
    events = memories.history("counter")
    assert [e.new.content for e in events if e.new is not None] == ["count 2", "count 3", "count 4"]


def test_forget_removes_what_a_subject_wrote_from_histories_that_stay(
    mem: Memory, clock: ManualClock
) -> None:
    memories = mem.long_term("shared")
    memories.save(id="fact", content="alice's version", subject="alice")
    clock.advance(1)
    memories.save(id="fact", content="bob's version", subject="bob")
    clock.advance(1)
    memories.save(id="fact", content="bob's second version", subject="bob")
    memories.save(id="alice-only", content="about alice", subject="alice")
    report = mem.forget(subject="alice")
    assert report.remaining == 0
    assert memories.history("alice-only") == []
    events = memories.history("fact")
    assert [(e.op, e.old is None) for e in events] == [("update", True), ("update", False)]
    raw = json.dumps(mem.engine.lrange(memories.keys.history("fact"), 0, -1))
    assert "alice" not in raw  # neither an item they wrote nor a copy of their version


def test_forget_of_a_scope_leaves_no_history(mem: Memory) -> None:
    memories = mem.long_term("gone")
    for n in range(3):
        memories.save(id=f"e{n}", content=f"fact {n}")
    memories.save(id="e0", content="fact zero")
    report = mem.forget(scope="gone")
    assert report.remaining == 0
    assert list(mem.engine.scan(memories.keys.base)) == []


def test_history_reads_write_nothing(mem: Memory) -> None:
    memories = mem.long_term("u")
    saved = memories.save(content="x")
    before = sorted(mem.engine.raw_items())
    clear_caches()
    assert [e.op for e in memories.history(saved.id)] == ["create"]
    assert isinstance(memories.history(saved.id)[0], HistoryEvent)
    assert sorted(mem.engine.raw_items()) == before
