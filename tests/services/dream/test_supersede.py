"""Passes supersede instead of retiring where one entry replaces another, on every engine: the record
keeps each superseded version before and after, undo puts the one before back exactly, and the
history explains every entry that is no longer current."""

from __future__ import annotations

from dataclasses import replace

from memstack import ManualClock, Memory
from memstack.llm.scripted import ScriptedChatModel
from memstack.services.dream import Dreamer

from ._helpers import answer, seeded


def test_undo_restores_the_previous_validity_exactly(mem: Memory, clock: ManualClock) -> None:
    memory, e = seeded(mem, 4)
    # e[1] was already superseded by e[2] (the user's own save): the pass must leave it alone
    memory.save(id=e[2].id, content=e[2].content, category="facts", tags=["t2"], supersedes=[e[1].id])
    before = {x.id: x for x in memory.entries()}
    reply = answer([], [{"content": "facts 0 and 3 about apples", "sourceIds": [e[0].id, e[3].id, e[1].id]}])
    dreamer = Dreamer(memory, model=ScriptedChatModel([reply]))
    clock.advance(60)
    record = dreamer.consolidate(force=True)  # 2 of the 3 current entries: past the guard rail
    assert record is not None and record.status == "applied"
    assert record.unknown == (e[1].id,)  # not current: not shown, not touched
    merged = record.created[0].entry
    assert [x.entry.id for x in record.superseded] == [e[0].id, e[3].id]
    for x in record.superseded:
        assert replace(x.entry, valid_to=None, superseded_by=None, updated_at=None) == replace(
            before[x.entry.id], updated_at=None
        )
        assert x.entry.superseded_by == merged.id and x.entry.valid_to == merged.valid_from
    assert dreamer.history()[0].summary()["superseded_count"] == 2
    assert {h.entry.id for h in memory.search(None)} == {e[2].id, merged.id}
    clock.advance(60)
    report = dreamer.undo(record.id)
    assert set(report.restored) == {e[0].id, e[3].id} and report.removed == (merged.id,)
    assert {x.id: x for x in memory.entries()} == before
    assert [(h.op, h.actor) for h in memory.history(e[0].id)] == [
        ("create", "api"),
        ("supersede", record.actor),
        ("restore", f"undo:{record.id}"),
    ]


def test_an_entry_changed_since_the_pass_is_kept_by_undo(mem: Memory, clock: ManualClock) -> None:
    memory, e = seeded(mem, 4)
    reply = answer([], [{"content": "apples, merged", "sourceIds": [e[0].id]}])
    dreamer = Dreamer(memory, model=ScriptedChatModel([reply]))
    record = dreamer.consolidate()
    assert record is not None
    clock.advance(1)
    edited = memory.save(id=e[0].id, content="fact zero, edited after the pass")
    report = dreamer.undo(record.id)
    assert e[0].id in report.kept and e[0].id not in report.restored
    assert memory.get(e[0].id) == edited


def test_forget_removes_a_subjects_superseded_copies_from_records(mem: Memory) -> None:
    memory = mem.long_term("u")
    alice = memory.save(content="Alice plays the violin", subject="alice")
    memory.save(content="Bob plays the drums", subject="bob")
    memory.save(content="Carol sings")
    reply = answer([], [{"content": "Alice plays the viola", "sourceIds": [alice.id]}])
    record = Dreamer(memory, model=ScriptedChatModel([reply])).consolidate()
    assert record is not None and record.created[0].entry.subject == "alice"
    report = mem.forget(subject="alice")
    assert report.remaining == 0
    assert memory.get(alice.id) is None
    assert sorted(h.entry.content for h in memory.search(None)) == ["Bob plays the drums", "Carol sings"]
    assert Dreamer(memory).history() == []  # the record held only alice's copies: it went whole
