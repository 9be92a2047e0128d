"""The pure parts of the extract pass: the answers' parsers, the prompts, the cursor, the plan; and
the pass from the scheduler and ``Dreamer.run`` on every engine."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import InvalidValue
from memstack.llm.scripted import ScriptedChatModel
from memstack.services.dream import Dreamer
from memstack.services.dream.cursor import Cursor, advanced, new_turns
from memstack.services.dream.extract import extraction_plan
from memstack.services.dream.parse import Decision, ProposedFact, parse_decisions, parse_facts
from memstack.services.dream.prompt import decision_prompt, extraction_prompt
from memstack.services.dream.scheduler import ACTIVITY_WINDOW, DreamScheduler
from memstack.tiers.conversation.turns import message_id_of
from memstack.tiers.longterm import MemoryEntry

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_parse_facts_and_decisions() -> None:
    text = (
        '<think>{"facts": []}</think> sure: {"FACTS": [{"Content": "a", "SourceIds": ["m1"], "validFrom": 0}'
    )
    text = text.replace("0}", "null}]}")
    assert parse_facts(text) == [ProposedFact("a", None, (), ("m1",), None)]
    assert parse_decisions('{"decisions": [{"fact": 2, "action": " UPDATE ", "ids": ["x"]}]}') == [
        Decision(2, "update", ("x",))
    ]
    for bad, match in [
        ('{"facts": [{"content": 1}]}', r"facts\[0\].content"),
        ('{"facts": [{"content": "a", "validFrom": true}]}', "validFrom"),
        ('{"facts": [{"content": "a", "validFrom": {"at": 5}}]}', "validFrom"),
        ('{"toSave": []}', "no facts"),
        ('{"decisions": [{"fact": 0, "action": "add"}]}', "fact number"),
        ('{"decisions": [{"fact": true, "action": "add"}]}', "fact number"),
        ('{"decisions": [{"fact": 1, "action": "delete"}]}', "must be one of"),
        ('{"decisions": [{"fact": 1, "action": "add", "ids": "x"}]}', "list of strings"),
        ('{"decisions": ' + "[" * 2000 + "]" * 2000 + "}", "model answer"),
    ]:
        with pytest.raises(InvalidValue, match=match):
            (parse_facts if "facts" in bad or "toSave" in bad else parse_decisions)(bad)


def test_a_numeric_valid_from_is_epoch_seconds_by_the_one_time_rule() -> None:
    text = (
        '{"facts": [{"content": "a", "validFrom": 1767225600}, {"content": "b", "validFrom": 1767225600.5}]}'
    )
    first, second = parse_facts(text)
    assert first.valid_from == 1767225600
    assert second.valid_from == 1767225600.5
    turns = {"m1": {"timestamp": (T0 + timedelta(days=3)).timestamp(), "session_id": "s", "subject": "al"}}
    facts = [
        ProposedFact("Lives in Berlin", source_ids=("m1",), valid_from=int(T0.timestamp()) + 86400),
        ProposedFact("Likes cats", source_ids=("m1",), valid_from=99999999999),  # year 5138: after now
    ]
    ids = iter(["n1", "n2"])
    decisions = [Decision(1, "add"), Decision(2, "add")]
    plan = extraction_plan(
        facts, [[], []], decisions, turns, T0 + timedelta(days=5), make_id=lambda: next(ids)
    )
    berlin, cats = (n.entry for n in plan.create)
    assert berlin.valid_from == T0 + timedelta(days=1)  # seconds, as the model said
    assert cats.valid_from == T0 + timedelta(days=3)  # after now: when it was said


def test_prompts_show_ids() -> None:
    turns = [
        {"session_id": "s1", "role": "user", "content": "hi\nthere", "message_id": "m1"},
        {"session_id": "s2", "role": "assistant", "content": "yo", "message_id": "m2"},
    ]
    _, user = extraction_prompt("SYSTEM", turns)
    assert (
        user["content"]
        == "## Session: s1\n[ID:m1] [user] hi\n   there\n\n## Session: s2\n[ID:m2] [assistant] yo"
    )
    _, user = decision_prompt("SYSTEM", [("fact one", [MemoryEntry("e1", "known\n fact")]), ("two", [])])
    assert user["content"] == "1. fact one\n   [ID:e1] known fact\n2. two\n   (none)"


def test_the_cursor_reads_each_turn_once_even_at_one_time() -> None:
    log = [{"timestamp": 5.0, "message_id": f"m{n}"} for n in range(3)] + [
        {"timestamp": 6.0, "message_id": "m3"}
    ]
    first = advanced(Cursor(), log[:2])
    assert first == Cursor(5.0, ("m0", "m1"))
    assert [t["message_id"] for t in new_turns(log, first)] == ["m2", "m3"]
    second = advanced(first, new_turns(log, first))
    assert second == Cursor(6.0, ("m3",)) and new_turns(log, second) == []
    assert Cursor.to_json(second) == '{"at":6.0,"ids":["m3"]}'


def test_message_ids_of_old_log_entries_are_derived_and_stable() -> None:
    old = {"session_id": "s", "role": "user", "content": "x", "timestamp": 1.0}
    assert message_id_of(old) == message_id_of(dict(old)) and message_id_of(old).startswith("l")
    assert message_id_of({**old, "message_id": "given"}) == "given"
    assert message_id_of({**old, "message_id": "bad id!"}) != "bad id!"


def test_extraction_plan_rules() -> None:
    known = [
        MemoryEntry("lisbon", "Lives in Lisbon", created_at=T0),
        MemoryEntry("tea", "Drinks tea", created_at=T0),
    ]
    turns = {"m1": {"timestamp": (T0 + timedelta(days=3)).timestamp(), "session_id": "s", "subject": "al"}}
    facts = [
        ProposedFact("Lives in Berlin", source_ids=("m1", "zz"), valid_from="2026-01-02T00:00:00Z"),
        ProposedFact("Drinks tea", source_ids=("m1",)),  # exactly known: dropped without asking
        ProposedFact("Likes cats", source_ids=("m1",), valid_from="not a time"),
        ProposedFact("Lives  in berlin", source_ids=("m1",)),  # a repeat of the first
        ProposedFact("Lives in Rome", source_ids=("m1",), valid_from="2099-01-01T00:00:00Z"),
    ]
    decisions = [
        Decision(1, "update", ("LISBON", "ghost")),
        Decision(5, "update", ("lisbon", "tea")),
    ]
    ids = iter(["n1", "n2", "n3"])
    now = T0 + timedelta(days=5)
    plan = extraction_plan(
        facts, [known, known, [], known, known], decisions, turns, now, make_id=lambda: next(ids)
    )
    assert [(n.entry.id, n.entry.content, n.supersedes, n.message_ids) for n in plan.create] == [
        ("n1", "Lives in Berlin", ("lisbon",), ("m1",)),
        ("n2", "Likes cats", (), ("m1",)),
        ("n3", "Lives in Rome", ("tea",), ("m1",)),  # lisbon is replaced once, by the first fact
    ]
    berlin, cats, rome = (n.entry for n in plan.create)
    assert berlin.valid_from == datetime(2026, 1, 2, tzinfo=UTC)  # as the turns say
    assert cats.valid_from == T0 + timedelta(days=3)  # a garbled time: when it was said
    assert rome.valid_from == T0 + timedelta(days=3)  # a time in the future: when it was said
    assert berlin.subject == "al" and berlin.created_at == now and berlin.updated_at is None
    assert berlin.metadata == {"source": "extracted", "message_ids": ["m1"], "session_ids": ["s"]}
    assert plan.unknown == ("ghost",) and plan.dropped == 2 and plan.kind == "extract"
    assert {e.id for e in plan.basis} == {"lisbon", "tea"} and plan.removed == 2


def test_the_scheduler_and_run_take_the_extract_pass(mem: Memory, clock: ManualClock) -> None:
    memory = mem.long_term("pat")
    memory.save(content="Pat walks the dog")
    mem.turns.add("s1", "user", "I got a second dog, Rex", message_id="m1", subject="pat")
    reply = json.dumps({"facts": [{"content": "Pat has a second dog named Rex", "sourceIds": ["m1"]}]})
    decide = json.dumps({"decisions": [{"fact": 1, "action": "add"}]})
    scheduler = DreamScheduler(
        mem, interval=3600, model=ScriptedChatModel([reply, decide]), passes=["extract"]
    )
    clock.advance(ACTIVITY_WINDOW + 1)
    (record,) = scheduler.run_once()
    assert record.kind == "extract" and [c.message_ids for c in record.created] == [("m1",)]
    dreamer = Dreamer(memory, model=ScriptedChatModel([]), turns=mem.turns)
    assert dreamer.run(["extract"]) == []  # nothing new: no model call
    with pytest.raises(InvalidValue, match="sessions"):
        dreamer.extract(sessions="s1")  # type: ignore[arg-type]  # a string is not a list of ids
