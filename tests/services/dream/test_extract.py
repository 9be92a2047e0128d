"""The ``extract`` pass against a REAL OpenAI-compatible server on loopback, on every engine, with
contradictory and hostile replies: the record, the provenance, undo, the refusal rules, and a dry
run that writes nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import DreamRefused, InvalidConfiguration
from memstack.services.dream import Dreamer
from memstack.tiers.longterm import LongTermMemory

from ._openai_server import Step, fake_openai
from .test_http_model import client

DAY = 86400.0
QUESTION = "where does the user live"


def facts(*items: dict[str, Any]) -> str:
    return json.dumps({"facts": list(items)})


def decisions(*items: dict[str, Any]) -> str:
    return "Here you are:\n```json\n" + json.dumps({"decisions": list(items)}) + "\n```"


def scope(mem: Memory, clock: ManualClock) -> LongTermMemory:
    """Four known facts, ten days old, and four new turns (ids m1-m4) in session s1."""
    memory = mem.long_term("u")
    memory.save(id="lisbon", content="The user lives in Lisbon", category="user/home")
    memory.save(id="jazz", content="The user likes jazz music")
    memory.save(id="tea", content="The user drinks green tea")
    memory.save(id="cat", content="The user has a cat named Tom")
    clock.advance(10 * DAY)
    mem.turns.add("s1", "user", "I moved to Berlin five days ago!", message_id="m1")
    mem.turns.add("s1", "assistant", "Congratulations on the move.", message_id="m2")
    mem.turns.add("s1", "user", "I still listen to jazz every day", message_id="m3")
    mem.turns.add("s1", "user", "My sister Ana visits next week", message_id="m4")
    return memory


def moved_at(clock: ManualClock) -> str:
    return datetime.fromtimestamp(clock.now() - 5 * DAY, UTC).isoformat()


GOOD_FACTS = [
    {"content": "The user lives in Berlin", "category": "user/home", "sourceIds": ["m1"]},
    {"content": "The user likes jazz music", "sourceIds": ["m3"]},  # exactly known: no question
    {"content": "The user listens to jazz every day", "sourceIds": ["m3"]},
    {"content": "The user's sister Ana visits next week", "sourceIds": ["m4"]},
    {"content": "A fact from nowhere", "sourceIds": ["m99"]},  # a message id never shown
    {"content": "   ", "sourceIds": ["m1"]},
]


def test_add_update_duplicate_with_provenance_then_undo(mem: Memory, clock: ManualClock) -> None:
    memory = scope(mem, clock)
    before = {e.id: e for e in memory.entries()}
    found = [dict(GOOD_FACTS[0], validFrom=moved_at(clock)), *GOOD_FACTS[1:]]
    decided = decisions(
        {"fact": 1, "action": "update", "ids": ["LISBON"]},
        {"fact": 3, "action": "duplicate", "ids": ["jazz"]},
        {"fact": 4, "action": "add"},
        {"fact": 4, "action": "unrelated"},  # a second word on fact 4: the first one counts
        {"fact": 9, "action": "update", "ids": ["tea"]},  # no such fact: ignored
    )
    with fake_openai([facts(*found), decided]) as server:
        dreamer = Dreamer(memory, model=client(server.url), turns=mem.turns)
        record = dreamer.extract()
        assert dreamer.extract() is None  # nothing new since: no request at all
    assert len(server.requests) == 2
    shown = server.requests[0]["messages"][1]["content"]
    assert "[ID:m1] [user] I moved to Berlin five days ago!" in shown and "## Session: s1" in shown
    question = server.requests[1]["messages"][1]["content"]
    assert "1. The user lives in Berlin" in question and "[ID:lisbon] The user lives in Lisbon" in question

    assert record is not None and record.status == "applied" and record.kind == "extract"
    assert record.model == "dream-model" and record.prompt_digest is not None
    assert record.dropped == 4 and record.unknown == ()  # the exact and the decided duplicates, m99, blank
    berlin, ana = (c.entry for c in record.created)
    assert berlin.content == "The user lives in Berlin" and ana.content.startswith("The user's sister Ana")
    assert [c.message_ids for c in record.created] == [("m1",), ("m4",)]
    assert berlin.metadata == {"source": "extracted", "message_ids": ["m1"], "session_ids": ["s1"]}
    assert berlin.valid_from is not None and berlin.valid_from.isoformat() == moved_at(clock)
    assert ana.valid_from == datetime.fromtimestamp(clock.now(), UTC)  # when it was said
    assert [x.entry.id for x in record.superseded] == ["lisbon"]
    lisbon = memory.get("lisbon")
    assert lisbon is not None and lisbon.superseded_by == berlin.id and lisbon.valid_to == berlin.valid_from
    now_ids = [h.entry.id for h in memory.search(QUESTION)]
    assert now_ids[0] == berlin.id and "lisbon" not in now_ids
    then_ids = [h.entry.id for h in memory.search(QUESTION, as_of=clock.now() - 8 * DAY)]
    assert then_ids[0] == "lisbon" and berlin.id not in then_ids
    assert [(e.op, e.actor) for e in memory.history("lisbon")][-1] == ("supersede", record.actor)
    assert [(e.op, e.actor, e.related_ids) for e in memory.history(berlin.id)] == [
        ("create", record.actor, ())
    ]

    report = dreamer.undo(record.id)
    assert report.restored == ("lisbon",) and set(report.removed) == {berlin.id, ana.id}
    assert {e.id: e for e in memory.entries()} == before  # the previous validity, exactly
    assert memory.history(berlin.id) == []
    assert [e.op for e in memory.history("lisbon")] == ["create", "supersede", "restore"]
    assert dreamer.extract() is None  # undo does not re-read the turns


@pytest.mark.parametrize(
    "script",
    [
        ["{facts: [oops"],  # malformed JSON
        ['{"facts": "Berlin"}'],  # a wrong shape
        [facts(GOOD_FACTS[0]), "I would update Lisbon."],  # no JSON in the decision
        [facts(GOOD_FACTS[0]), decisions({"fact": 1, "action": "replace", "ids": ["lisbon"]})],
        [facts({"content": "x" * 10, "category": "../etc", "sourceIds": ["m1"]})],
        [Step(status=500, body=b"{}")],
    ],
)
def test_an_unusable_answer_skips_the_pass_and_the_turns_are_read_again(
    mem: Memory, clock: ManualClock, script: list[str | Step]
) -> None:
    memory = scope(mem, clock)
    entries = memory.entries()
    unlike = {"content": "Ana visits next week", "sourceIds": ["m4"]}  # like nothing stored: no decision
    with fake_openai([*script, facts(unlike)]) as server:
        dreamer = Dreamer(memory, model=client(server.url), turns=mem.turns)
        record = dreamer.extract()
        assert record is not None and record.status == "skipped" and record.reason
        assert memory.entries() == entries
        clock.advance(1)
        again = dreamer.extract()  # the same turns: the cursor did not move
    assert again is not None and again.status == "applied"
    assert [c.message_ids for c in again.created] == [("m4",)]
    assert server.requests[-1]["messages"][1]["content"] == server.requests[0]["messages"][1]["content"]
    assert [r.status for r in dreamer.history()] == ["applied", "skipped"]


def test_only_ids_that_do_not_exist_is_refused_unless_forced(mem: Memory, clock: ManualClock) -> None:
    memory = scope(mem, clock)
    entries = memory.entries()
    lisbon = memory.get("lisbon")
    hostile = decisions({"fact": 1, "action": "update", "ids": ["ghost", "../lisbon"]})
    with fake_openai([facts(GOOD_FACTS[0]), hostile, facts(GOOD_FACTS[0]), hostile]) as server:
        dreamer = Dreamer(memory, model=client(server.url), turns=mem.turns)
        with pytest.raises(DreamRefused, match="only unknown ids"):
            dreamer.extract()
        assert memory.entries() == entries and dreamer.history()[0].status == "refused"
        record = dreamer.extract(force=True)  # the same turns again, forced
    assert record is not None and record.status == "applied"
    assert record.unknown == ("ghost", "../lisbon") and record.superseded == ()
    assert memory.get("lisbon") == lisbon  # an unknown id touches nothing


def test_superseding_half_the_scope_is_refused(mem: Memory, clock: ManualClock) -> None:
    memory = scope(mem, clock)
    entries = memory.entries()
    raw = sorted(mem.engine.raw_items())
    greedy = decisions({"fact": 1, "action": "update", "ids": ["lisbon", "jazz", "tea"]})
    with fake_openai([facts(GOOD_FACTS[0]), greedy]) as server:
        dreamer = Dreamer(memory, model=client(server.url), turns=mem.turns)
        with pytest.raises(DreamRefused, match="3 of 4 entries"):
            dreamer.extract()
    assert memory.entries() == entries
    assert [r.status for r in dreamer.history()] == ["refused"]
    changed = {key for key, _ in set(mem.engine.raw_items()) - set(raw)}
    assert not any("lt:" in key or "cursor" in key for key in changed)  # the refusal's record only


def test_a_dry_run_writes_nothing(mem: Memory, clock: ManualClock) -> None:
    memory = scope(mem, clock)
    raw = sorted(mem.engine.raw_items())
    update = decisions({"fact": 1, "action": "update", "ids": ["lisbon"]})
    with fake_openai([facts(GOOD_FACTS[0]), update]) as server:
        record = Dreamer(memory, model=client(server.url), turns=mem.turns).extract(dry_run=True)
    assert record is not None and record.status == "dry-run"
    assert [c.entry.content for c in record.created] == ["The user lives in Berlin"]
    assert record.superseded[0].entry.superseded_by == record.created[0].entry.id
    assert sorted(mem.engine.raw_items()) == raw


def test_contradictory_updates_supersede_an_entry_once(mem: Memory, clock: ManualClock) -> None:
    memory = scope(mem, clock)
    found = facts(GOOD_FACTS[0], {"content": "The user lives in Paris", "sourceIds": ["m1"]}, GOOD_FACTS[3])
    both = decisions(
        {"fact": 1, "action": "update", "ids": ["lisbon"]},
        {"fact": 2, "action": "update", "ids": ["lisbon", "cat"]},
        {"fact": 3, "action": "update", "ids": ["jazz", "tea"]},  # Ana visiting does not replace these...
    )
    with fake_openai([found, both]) as server:
        record = Dreamer(memory, model=client(server.url), turns=mem.turns).extract(force=True)
    assert record is not None and record.status == "applied"
    # ...but the model said so, the scope is small and forced: the guard rail is the only stop
    by_entry = {x.entry.id: x.entry.superseded_by for x in record.superseded}
    berlin, paris, ana = (c.entry.id for c in record.created)
    assert by_entry == {"lisbon": berlin, "cat": paris, "jazz": ana, "tea": ana}


def test_subjects_of_the_turns_label_what_is_learnt(mem: Memory, clock: ManualClock) -> None:
    memory = mem.long_term("family")
    mem.turns.add("alice-chat", "user", "I play the violin", subject="alice", message_id="a1")
    mem.turns.add("bob-chat", "user", "I play the drums", subject="bob", message_id="b1")
    found = facts(
        {"content": "Alice plays the violin", "sourceIds": ["a1"]},
        {"content": "Bob plays the drums", "sourceIds": ["b1"]},
        {"content": "Both play music", "sourceIds": ["a1", "b1"]},
    )
    with fake_openai([found]) as server:
        record = Dreamer(memory, model=client(server.url), turns=mem.turns).extract()
    assert record is not None and [c.entry.subject for c in record.created] == ["alice", "bob", None]
    report = mem.forget(subject="alice")
    assert report.remaining == 0
    assert sorted(e.content for e in memory.entries()) == ["Bob plays the drums", "Both play music"]
    assert "violin" not in json.dumps(Dreamer(memory).show(record.id).to_dict())


def test_sessions_and_batches(mem: Memory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    from memstack.services.dream import extract

    monkeypatch.setattr(extract, "EXTRACT_INPUT", 2)
    memory = mem.long_term("u")
    for n in range(3):
        mem.turns.add("mine", "user", f"my fact {n}", message_id=f"x{n}")  # one time: the ManualClock's
        mem.turns.add("other", "user", f"their fact {n}", message_id=f"y{n}")
    mine = [{"content": word, "sourceIds": [f"x{n}"]} for n, word in enumerate(("apples", "bananas"))]
    with fake_openai([facts(*mine)]) as server:
        dreamer = Dreamer(memory, model=client(server.url), turns=mem.turns)
        first = dreamer.extract(sessions=["mine"])
        with pytest.raises(InvalidConfiguration):
            Dreamer(memory, turns=mem.turns).extract()
    assert first is not None and len(first.created) == 2
    prompt = server.requests[0]["messages"][1]["content"]
    assert "[ID:x1]" in prompt and "x2" not in prompt and "their fact" not in prompt
    with fake_openai([facts({"content": "cherries", "sourceIds": ["x2"]})]) as server:
        second = Dreamer(memory, model=client(server.url), turns=mem.turns).extract(sessions=["mine"])
    assert second is not None and [c.message_ids for c in second.created] == [("x2",)]
    assert "[ID:x1]" not in server.requests[0]["messages"][1]["content"]
    assert Dreamer(memory, model=client(server.url), turns=mem.turns).extract(sessions=["mine"]) is None
