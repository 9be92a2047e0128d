"""The consolidation pass (spec 2 items 64-67, 71) on every engine, with ``ScriptedChatModel``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import DreamRefused, InvalidConfiguration
from memstack.llm.scripted import ScriptedChatModel
from memstack.services.dream import Dreamer, driver

from ._helpers import answer, seeded


def test_fewer_than_two_entries_skips_without_calling_the_model(mem: Memory) -> None:
    memory, _ = seeded(mem, 1)
    model = ScriptedChatModel([])
    assert Dreamer(memory, model=model).consolidate() is None
    assert model.calls == []
    assert Dreamer(memory, model=model).history() == []


def test_prompt_numbers_the_most_recent_entries_with_ids_categories_and_tags(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(driver, "CONSOLIDATION_INPUT", 3)  # the rule of 1000, on a scope of 4
    memory, entries = seeded(mem, 4)
    memory.save(content="untagged\nsecond line")
    model = ScriptedChatModel([answer()])
    Dreamer(memory, model=model).consolidate()
    system, user = model.calls[0]["messages"]
    assert system["role"] == "system" and "toDelete" in system["content"]
    text = user["content"]
    newest = memory.entries()[-1]
    assert f"1. [ID:{newest.id}] category=uncategorized tags=[(none)]\n   untagged\n   second line" in text
    assert f"2. [ID:{entries[3].id}] category=facts tags=[t3]\n   fact number 3 about apples" in text
    assert f"3. [ID:{entries[2].id}]" in text
    assert entries[1].id not in text and entries[0].id not in text  # beyond the most recent 3


def test_feedback_of_the_last_seven_days_at_most_fifty(mem: Memory) -> None:
    memory, _ = seeded(mem, 2)
    dreamer = Dreamer(memory, model=ScriptedChatModel([answer()]))
    clock = mem.clock
    assert isinstance(clock, ManualClock)
    dreamer.feedback.add("correction", "too old to matter")
    clock.advance(8 * 86400)
    for i in range(55):
        dreamer.feedback.add("negative", f"signal {i}")
    dreamer.consolidate()
    assert dreamer.model is not None
    text = dreamer.model.calls[0]["messages"][1]["content"]  # type: ignore[attr-defined]  # scripted
    assert "too old to matter" not in text
    assert "- [negative] signal 4\n" not in text
    assert "- [negative] signal 5\n" in text and "- [negative] signal 54\n" in text
    assert text.count("- [negative]") == 50


def test_exhaustive_deletion_union_case_insensitive_and_oldest_source_time(mem: Memory) -> None:
    memory, e = seeded(mem, 5)
    reply = answer(
        [e[0].id.upper()],
        [
            {
                "content": "  merged apples  ",
                "category": " fruit ",
                "tags": ["x"],
                "sourceIds": [e[3].id, e[2].id.upper()],
            }
        ],
    )
    record = Dreamer(
        memory, model=ScriptedChatModel([f"<think>{{nonsense}}</think>```json\n{reply}\n```"])
    ).consolidate(force=True)
    assert record is not None and record.status == "applied"
    current = {h.entry.id for h in memory.search(None)}
    assert {e[0].id, e[2].id, e[3].id}.isdisjoint(current)  # e[2], e[3] were never in toDelete
    assert {e[1].id, e[4].id} <= current
    (created,) = [x for x in memory.entries() if x.content == "merged apples"]
    assert created.category == "fruit" and created.tags == ("x",)
    assert created.created_at == e[2].created_at  # the oldest known source
    now = datetime.fromtimestamp(mem.clock.now(), UTC)
    assert created.updated_at == now and created.valid_from == now  # what it replaces held until now
    assert len(created.id) == 12
    # the sources are superseded by the new entry (they stay, as history); toDelete alone retires
    assert [a.entry.id for a in record.retired] == [e[0].id]
    assert memory.get(e[0].id) is None
    assert [x.entry.id for x in record.superseded] == [e[3].id, e[2].id]
    for source in (e[2], e[3]):
        kept = memory.get(source.id)
        assert kept is not None and kept.superseded_by == created.id and kept.valid_to == now
        assert [(h.op, h.actor) for h in memory.history(source.id)] == [
            ("create", "api"),
            ("supersede", f"dream:{record.id}"),
        ]
    assert record.created[0].source_ids == (e[3].id, e[2].id)
    assert [(h.op, h.related_ids) for h in memory.history(e[0].id)] == [("create", ()), ("retire", ())]


def test_unknown_ids_are_noops_and_blank_items_are_dropped(mem: Memory) -> None:
    memory, e = seeded(mem, 4)
    reply = answer(
        [e[0].id, "nosuchid", "NOSUCHID"],
        [
            {"content": "   ", "sourceIds": [e[1].id]},
            {"content": "new fact", "sourceIds": ["ghost"]},
            {"content": "New fact.", "sourceIds": []},
        ],
    )
    record = Dreamer(memory, model=ScriptedChatModel([reply])).consolidate()
    assert record is not None
    assert {a.entry.id for a in record.retired} == {e[0].id, e[1].id}  # a blank item's sources still go
    assert record.superseded == ()  # no item with a known source
    assert set(record.unknown) == {"nosuchid", "ghost"}
    assert record.dropped == 2  # the blank one, the repeat
    (created,) = [x for x in memory.entries() if x.content.lower().startswith("new fact")]
    assert created.created_at == datetime.fromtimestamp(mem.clock.now(), UTC)  # no known source: now


@pytest.mark.parametrize(
    "reply",
    [
        "I could not decide.",
        '{"toDelete": "not-a-list"}',
        '{"toSave": [{"content": 5}]}',
        '{"toSave": [{"content": "x", "category": "../etc"}]}',
        "{broken json",
    ],
)
def test_an_invalid_answer_skips_the_cycle_and_is_recorded(mem: Memory, reply: str) -> None:
    memory, e = seeded(mem, 3)
    dreamer = Dreamer(memory, model=ScriptedChatModel([reply]))
    record = dreamer.consolidate()
    assert record is not None and record.status == "skipped" and record.reason
    assert [x.id for x in memory.entries()] == [x.id for x in e]
    assert [r.id for r in dreamer.history()] == [record.id]


def test_a_model_error_skips_the_cycle(mem: Memory) -> None:
    memory, _ = seeded(mem, 2)
    record = Dreamer(memory, model=ScriptedChatModel([])).consolidate()
    assert record is not None and record.status == "skipped" and "ScriptExhausted" in (record.reason or "")


def test_guard_rails_refuse_too_much_and_only_unknown_unless_forced(mem: Memory) -> None:
    memory, e = seeded(mem, 4)
    too_much = answer([x.id for x in e[:3]])
    dreamer = Dreamer(memory, model=ScriptedChatModel([too_much, answer(["ghost"]), too_much]))
    with pytest.raises(DreamRefused, match="3 of 4 entries"):
        dreamer.consolidate()
    with pytest.raises(DreamRefused, match="only unknown ids"):
        dreamer.consolidate()
    assert len(memory) == 4
    assert [r.status for r in dreamer.history()] == ["refused", "refused"]
    record = dreamer.consolidate(force=True)
    assert record is not None and record.status == "applied" and len(memory) == 1


def test_dry_run_returns_the_plan_and_writes_nothing(mem: Memory) -> None:
    memory, e = seeded(mem, 4)
    dreamer = Dreamer(
        memory, model=ScriptedChatModel([answer([e[0].id], [{"content": "n", "sourceIds": [e[1].id]}])])
    )
    record = dreamer.consolidate(dry_run=True)
    assert record is not None and record.status == "dry-run"
    assert [a.entry.id for a in record.retired] == [e[0].id]
    assert [x.entry.id for x in record.superseded] == [e[1].id]
    assert record.superseded[0].entry.superseded_by == record.created[0].entry.id
    assert [c.entry.content for c in record.created] == ["n"]
    assert memory.entries() == e
    assert [[h.op for h in memory.history(x.id)] for x in e] == [["create"]] * 4
    assert dreamer.history() == []


def test_archived_entries_are_not_searchable_and_come_back_on_undo(mem: Memory) -> None:
    memory, e = seeded(mem, 3)
    dreamer = Dreamer(memory, model=ScriptedChatModel([answer([e[0].id])]))
    record = dreamer.consolidate()
    assert record is not None
    assert memory.get(e[0].id) is None
    assert e[0].id not in {h.entry.id for h in memory.search("fact number 0 apples")}
    report = dreamer.undo(record.id)
    assert report.restored == (e[0].id,)
    assert memory.get(e[0].id) == e[0]
    assert memory.search("fact number 0")[0].entry.id == e[0].id
    assert dreamer.show(record.id).status == "undone"


def test_records_and_archive_expire_after_the_retention(mem: Memory) -> None:
    memory, e = seeded(mem, 3)
    dreamer = Dreamer(memory, model=ScriptedChatModel([answer([e[0].id])]), retention=3600)
    record = dreamer.consolidate()
    assert record is not None
    assert isinstance(mem.clock, ManualClock)
    mem.clock.advance(3601)
    assert dreamer.history() == []
    from memstack.foundation.errors import EntryNotFound

    with pytest.raises(EntryNotFound):
        dreamer.undo(record.id)


def test_anti_pattern_convention_is_in_the_directive_and_corrections_reach_the_model(mem: Memory) -> None:
    memory, _ = seeded(mem, 2)
    anti = {
        "content": "Don't use tabs for Python — instead use 4 spaces",
        "category": "anti-patterns/code",
        "tags": ["anti-pattern"],
    }
    dreamer = Dreamer(memory, model=ScriptedChatModel([answer([], [anti])]))
    dreamer.feedback.add("correction", "No tabs in Python, please!")
    dreamer.consolidate()
    system, user = dreamer.model.calls[0]["messages"]  # type: ignore[union-attr]  # scripted
    assert "anti-patterns/{domain}" in system["content"] and "Don't [" in system["content"]
    assert "- [correction] No tabs in Python, please!" in user["content"]
    (saved,) = memory.search(None, category="anti-patterns/code")
    assert saved.entry.tags == ("anti-pattern",)


def test_a_replaced_directive_is_used(mem: Memory, tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "mine.md"
    path.write_text("MY DIRECTIVE", encoding="utf-8")
    memory, _ = seeded(mem, 2)
    model = ScriptedChatModel([answer()])
    Dreamer(memory, model=model, directive=path).consolidate()
    assert model.calls[0]["messages"][0]["content"] == "MY DIRECTIVE"
    with pytest.raises(InvalidConfiguration):
        Dreamer(memory, directive=Path(str(tmp_path)) / "missing.md")
    with pytest.raises(InvalidConfiguration, match="needs a chat model"):
        Dreamer(memory).consolidate()


def test_an_entry_edited_while_the_model_thinks_skips_the_cycle(mem: Memory) -> None:
    memory, e = seeded(mem, 4)

    def edit_then_answer(messages: object, tools: object) -> str:
        memory.save(id=e[0].id, content="edited by the user meanwhile")
        return answer([e[0].id, e[1].id])

    dreamer = Dreamer(memory, model=ScriptedChatModel([edit_then_answer]))
    record = dreamer.consolidate()
    assert record is not None and record.status == "skipped" and "changed since" in (record.reason or "")
    assert len(memory) == 4
    stored = memory.get(e[0].id)
    assert stored is not None and stored.content == "edited by the user meanwhile"
