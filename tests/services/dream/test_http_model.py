"""Dream passes driven by a REAL OpenAI-compatible server on loopback, with hostile answers,
on every engine."""

from __future__ import annotations

import json

import pytest

from memstack import Memory
from memstack.foundation.errors import DreamRefused
from memstack.llm.chat import ChatClient
from memstack.services.dream import Dreamer

from ._helpers import answer, seeded
from ._openai_server import Step, fake_openai


def client(url: str, **options: object) -> ChatClient:
    settings: dict[str, object] = {"retries": 0, "backoff": 0.0, "timeout": 5.0, **options}
    return ChatClient(url, "dream-model", **settings)  # type: ignore[arg-type]  # test options


def test_a_well_formed_pass_over_http_records_the_model(mem: Memory) -> None:
    memory, e = seeded(mem, 4)
    reply = "<think>let me see {}</think>" + answer(
        [e[0].id], [{"content": "apples", "sourceIds": [e[1].id]}]
    )
    with fake_openai([reply]) as server:
        record = Dreamer(memory, model=client(server.url, json_mode=True)).consolidate()
    assert record is not None and record.status == "applied" and record.model == "dream-model"
    assert record.prompt_digest and len(record.prompt_digest) == 64
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert {x.id for x in memory.entries()} >= {e[2].id, e[3].id}


def test_unknown_duplicate_and_case_variant_ids(mem: Memory) -> None:
    memory, e = seeded(mem, 4)
    ids = [e[0].id, e[0].id.upper(), e[0].id, "zzzzzz", e[1].id.title()]
    reply = answer(ids, [{"content": "x", "sourceIds": [e[1].id.upper(), e[1].id]}])
    with fake_openai([reply]) as server:
        record = Dreamer(memory, model=client(server.url)).consolidate()
    assert record is not None and record.status == "applied"
    assert [a.entry.id for a in record.retired] == [e[0].id]
    assert [x.entry.id for x in record.superseded] == [e[1].id]  # a source: superseded by "x"
    assert record.unknown == ("zzzzzz",)
    assert record.created[0].source_ids == (e[1].id,)


def test_blank_and_repeated_items_create_nothing_twice(mem: Memory) -> None:
    memory, _ = seeded(mem, 2)
    items = [
        {"content": ""},
        {"content": " \n "},
        {"content": "Same"},
        {"content": "same"},
        {"content": None},
    ]
    with fake_openai([answer([], items)]) as server:
        record = Dreamer(memory, model=client(server.url)).consolidate()
    assert record is not None and len(record.created) == 1 and record.dropped == 4
    assert len(memory) == 3


def test_a_huge_list_is_refused_as_an_answer_and_skipped(mem: Memory) -> None:
    memory, _ = seeded(mem, 2)
    with fake_openai([answer([f"id{i}" for i in range(6000)])]) as server:
        record = Dreamer(memory, model=client(server.url)).consolidate()
    assert record is not None and record.status == "skipped" and "5000" in (record.reason or "")


def test_a_long_list_of_unknown_ids_is_refused(mem: Memory) -> None:
    memory, _ = seeded(mem, 2)
    with (
        fake_openai([answer([f"id{i}" for i in range(3000)])]) as server,
        pytest.raises(DreamRefused, match="only unknown ids"),
    ):
        Dreamer(memory, model=client(server.url)).consolidate()
    assert len(memory) == 2


@pytest.mark.parametrize(
    "step",
    [
        Step(content="Sure! Here you go: {toDelete: [oops]}"),
        Step(body=b"<html>bad gateway</html>"),
        Step(status=500, body=b"{}"),
        Step(delay=1.0, content="{}"),
        Step(content=None),
        Step(content=json.dumps([{"content": "an array, not an object"}])),
        Step(content='{"toSave": [{"content": "half a pair \\ud800"}]}'),
        Step(
            content='{"toDelete": [], "toSave": [{"content": "deep", "tags": ' + "[" * 200 + "]" * 200 + "}]}"
        ),
    ],
    ids=[
        "invalid-json",
        "not-json-body",
        "server-error",
        "timeout",
        "null-content",
        "array",
        "surrogate",
        "deep",
    ],
)
def test_hostile_answers_skip_the_cycle_and_change_nothing(mem: Memory, step: Step) -> None:
    memory, e = seeded(mem, 3)
    with fake_openai([step]) as server:
        dreamer = Dreamer(memory, model=client(server.url, timeout=0.3))
        record = dreamer.consolidate()
    assert record is not None and record.status == "skipped" and record.reason
    assert [x.id for x in memory.entries()] == [x.id for x in e]
    assert dreamer.history()[0].id == record.id


def test_preferences_over_http_and_the_log_is_cleared_on_timeout(mem: Memory) -> None:
    mem.turns.add("s1", "user", "stop!")
    with fake_openai([Step(delay=1.0, content="{}")]) as server:
        record = Dreamer(
            mem.long_term("u1"), model=client(server.url, timeout=0.3), turns=mem.turns
        ).infer_preferences()
    assert record is not None and record.status == "skipped"
    assert mem.turns.log_entries() == []
