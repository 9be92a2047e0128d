"""MemstackSession and the memory tools inside real OpenAI Agents SDK runs, on every engine."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="the openai-agents extra is not installed")
pytest.importorskip("fastapi")

from agents import Agent, Runner, set_tracing_disabled
from agents.memory import Session, SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call

from memstack import InvalidSessionId, InvalidValue, Memory
from memstack.doors.integrations.openai_agents import MemstackSession, memory_tools
from memstack.engines import Engine

from ._doors import default_tenant, http_door

set_tracing_disabled(True)  # nothing leaves the machine
WORKER = Path(__file__).with_name("_openai_session_worker.py")

ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "Hej! Mon chien s'appelle Rex 🐕"},
    {"type": "function_call", "call_id": "c1", "name": "save_memory", "arguments": '{"content":"dog: Rex"}'},
    {"type": "function_call_output", "call_id": "c1", "output": '{"id":"x"}'},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Noted.", "annotations": [], "logprobs": []}],
    },
    {"role": "developer", "content": [{"type": "input_text", "text": "be brief"}], "extra": None, "n": 1.5},
]


def text_of(item: dict[str, Any]) -> str:
    content = item["content"]
    return content if isinstance(content, str) else str(content[0]["text"])


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_items_round_trip_pop_and_limits(mem: Memory) -> None:
    session = MemstackSession("chat-1", mem)
    assert isinstance(session, Session)
    assert run(session.get_items()) == [] and run(session.pop_item()) is None
    run(session.add_items(ITEMS))
    assert run(session.get_items()) == ITEMS
    assert run(session.get_items(limit=2)) == ITEMS[-2:]
    assert run(session.get_items(limit=0)) == []
    assert run(session.pop_item()) == ITEMS[-1]
    assert run(session.pop_item()) == ITEMS[-2]
    assert run(session.get_items()) == ITEMS[:3]
    run(session.add_items([{"role": "user", "content": "again"}]))
    assert run(session.get_items(limit=2)) == [ITEMS[2], {"role": "user", "content": "again"}]
    for _ in range(4):
        run(session.pop_item())
    assert run(session.get_items()) == [] and run(session.pop_item()) is None
    run(session.add_items(ITEMS[:1]))
    assert MemstackSession("chat-1", mem).items() == ITEMS[:1], "a second session object reads the same"
    limited = MemstackSession("chat-1", mem, session_settings=SessionSettings(limit=1))
    run(limited.add_items(ITEMS[1:2]))
    assert run(limited.get_items()) == ITEMS[1:2]
    run(session.clear_session())
    assert run(session.get_items()) == [] and mem.conversations.count("chat-1") == 0


def test_bad_input_is_refused_and_writes_nothing(mem: Memory) -> None:
    with pytest.raises(InvalidSessionId, match="session_id"):
        MemstackSession("no spaces", mem)
    session = MemstackSession("chat-2", mem)
    with pytest.raises(InvalidValue, match="JSON"):
        run(session.add_items([{"role": "user", "content": "ok"}, {"bad": float("nan")}]))
    with pytest.raises(InvalidValue, match="must be a dict"):
        run(session.add_items(["text"]))
    assert run(session.get_items()) == []


def test_an_agent_run_remembers_and_other_doors_show_it(engine: Engine) -> None:
    mem = default_tenant(engine)
    model = ScriptedModel(
        [
            [function_call("save_memory", {"content": "Ann's dog is called Rex"}, call_id="c1")],
            [assistant_message("I will remember Rex.")],
            [function_call("search_memory", {"query": "dog name"}, call_id="c2")],
            [assistant_message("Your dog is Rex.")],
        ]
    )
    agent = Agent(name="helper", model=model, tools=memory_tools(mem.long_term("ann"), subject="ann"))
    session = MemstackSession("ann-chat", mem, subject="ann")
    first = run(Runner.run(agent, "my dog is called Rex", session=session))
    assert first.final_output == "I will remember Rex."
    second = run(Runner.run(agent, "what is my dog called?", session=session))
    assert second.final_output == "Your dog is Rex."
    searched = [i for i in model.last_call.input if i.get("type") == "function_call_output"]  # type: ignore[union-attr]
    assert "Rex" in searched[-1]["output"], "the search tool found the saved memory"
    assert model.last_call.input[0] == {"content": "my dog is called Rex", "role": "user"}  # type: ignore[union-attr]
    items = run(session.get_items())
    assert [i.get("type", "message") for i in items].count("function_call_output") == 2
    with http_door(engine) as client:
        thread = client.get("/v1/conversations/ann-chat/thread").json()["items"]
        assert [json.loads(m["content"]) for m in thread] == items
        memories = client.get("/v1/memories", params={"scope": "ann", "query": "dog"}).json()["items"]
        assert [h["entry"]["content"] for h in memories] == ["Ann's dog is called Rex"]
    report = mem.forget(subject="ann")
    assert report.remaining == 0
    assert run(session.get_items()) == [] and mem.long_term("ann").entries() == []


def test_forget_subject_leaves_other_users(mem: Memory) -> None:
    for user in ("ann", "bob"):
        run(MemstackSession(f"{user}-chat", mem, subject=user).add_items(ITEMS[:1]))
        mem.long_term(user).save(content=f"{user} likes tea", subject=user)
    mem.forget(subject="ann")
    assert MemstackSession("ann-chat", mem).items() == []
    assert MemstackSession("bob-chat", mem).items() == ITEMS[:1]
    assert [e.content for e in mem.long_term("bob").entries()] == ["bob likes tea"]


def test_concurrent_agents_in_processes_lose_and_repeat_nothing(
    mem: Memory, engine_kind: str, engine_url_for: str
) -> None:
    if engine_kind == "memory":
        pytest.skip("the memory engine lives in one process")
    workers, rounds = 3, 6
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), engine_url_for, f"w{i}", str(rounds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(workers)
    ]
    popped: list[dict[str, Any]] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        popped += json.loads(out)
    remaining = MemstackSession("shared", mem).items()
    kinds = ("question", "answer")
    added = [f"w{i} {kind} {n}" for i in range(workers) for n in range(rounds) for kind in kinds]
    assert sorted(map(text_of, remaining + popped)) == sorted(added), "no item lost or repeated"
    assert len(popped) == workers * rounds // 2
