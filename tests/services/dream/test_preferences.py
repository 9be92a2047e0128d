"""The preference inference pass (spec 2 items 68-70) and the DESIGN §6 decision on the seed's
early return, on every engine."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memstack import Memory
from memstack.llm.scripted import ScriptedChatModel
from memstack.services.dream import Dreamer

from ._helpers import answer, seeded


def prefs(*items: dict[str, object]) -> str:
    return json.dumps({"toSave": list(items)})


def test_prompt_groups_the_log_by_session_with_feedback(mem: Memory) -> None:
    mem.turns.add("s1", "user", "Stop using emojis!")
    mem.turns.add("s2", "user", "hello")
    mem.turns.add("s1", "assistant", "Sorry.")
    model = ScriptedChatModel([prefs()])
    dreamer = Dreamer(mem.long_term("u1"), model=model, turns=mem.turns)
    dreamer.feedback.add("correction", "no emojis")
    dreamer.infer_preferences()
    system, user = model.calls[0]["messages"]
    assert "**1** occurrence" in system["content"] and "requires_user_permission" in system["content"]
    assert user["content"].startswith(
        "## Session: s1\n[user] Stop using emojis!\n[assistant] Sorry.\n\n## Session: s2\n[user] hello\n"
    )
    assert "- [correction] no emojis" in user["content"]


def test_saved_preferences_carry_inferred_tag_source_and_default_category(mem: Memory) -> None:
    mem.turns.add("s1", "user", "never send my card number")
    reply = prefs(
        {
            "content": " Never share card numbers ",
            "tags": ["money"],
            "metadata": {"Source": "llm", "requires_user_permission": "true"},
        },
        {"content": "Likes short answers", "category": " style ", "tags": ["INFERRED", "x"]},
        {"content": "   "},
    )
    memory = mem.long_term("u1")
    record = Dreamer(memory, model=ScriptedChatModel([reply]), turns=mem.turns).infer_preferences()
    assert record is not None and record.status == "applied" and record.dropped == 1
    by_content = {e.content: e for e in memory.entries()}
    card = by_content["Never share card numbers"]
    assert card.tags == ("inferred", "money")
    assert card.metadata == {"requires_user_permission": "true", "source": "inferred"}
    assert card.category == "user-preferences/inferred"
    now = datetime.fromtimestamp(mem.clock.now(), UTC)
    assert card.created_at == now and card.updated_at == now
    short = by_content["Likes short answers"]
    assert short.tags == ("INFERRED", "x") and short.category == "style"
    assert short.metadata == {"source": "inferred"}


@pytest.mark.parametrize("reply", ["not json", '{"toSave": 3}', None])
def test_the_log_is_cleared_whatever_happens(mem: Memory, reply: str | None) -> None:
    mem.turns.add("s1", "user", "hi")
    model = ScriptedChatModel([] if reply is None else [reply])  # None: the model fails
    record = Dreamer(mem.long_term("u1"), model=model, turns=mem.turns).infer_preferences()
    assert record is not None and record.status == "skipped"
    assert mem.turns.log_entries() == []


def test_an_empty_log_skips_the_pass(mem: Memory) -> None:
    model = ScriptedChatModel([])
    assert Dreamer(mem.long_term("u1"), model=model, turns=mem.turns).infer_preferences() is None
    assert model.calls == []


def test_dry_run_keeps_the_log_and_writes_nothing(mem: Memory) -> None:
    mem.turns.add("s1", "user", "hi")
    memory = mem.long_term("u1")
    record = Dreamer(
        memory, model=ScriptedChatModel([prefs({"content": "p"})]), turns=mem.turns
    ).infer_preferences(dry_run=True)
    assert (
        record is not None
        and record.status == "dry-run"
        and [c.entry.content for c in record.created] == ["p"]
    )
    assert len(memory) == 0 and len(mem.turns.log_entries()) == 1


def test_each_pass_runs_on_its_own_conditions_with_fewer_than_two_memories(mem: Memory) -> None:
    """DESIGN §6: the seed returns early below 2 memories, skipping preferences and keeping the
    log; memstack skips only consolidation."""
    memory, _ = seeded(mem, 1)
    mem.turns.add("s1", "user", "I hate long answers! Stop it!")
    model = ScriptedChatModel([prefs({"content": "Wants short answers"})])
    records = Dreamer(memory, model=model, turns=mem.turns).run()
    assert [r.kind for r in records] == ["preferences"]
    assert len(model.calls) == 1  # consolidation never asked the model
    assert "Wants short answers" in {e.content for e in memory.entries()}
    assert mem.turns.log_entries() == []


def test_run_does_both_passes_in_order(mem: Memory) -> None:
    memory, e = seeded(mem, 3)
    mem.turns.add("s1", "user", "hi")
    model = ScriptedChatModel([answer([e[0].id]), prefs({"content": "Says hi"})])
    records = Dreamer(memory, model=model, turns=mem.turns).run()
    assert [(r.kind, r.status) for r in records] == [("consolidate", "applied"), ("preferences", "applied")]
