"""The save_memory expansion through ``save_hook``, on every engine."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import memstack
from _forked import in_child
from memstack import Memory
from memstack.llm.scripted import ScriptedChatModel
from memstack.ops.memory_tools import MemoryTools
from memstack.services.dream import Dreamer
from memstack.services.dream.expand import ExpansionHook

from ._openai_server import fake_openai


def _tools(
    mem: Memory, model: ScriptedChatModel, background: bool = False
) -> tuple[MemoryTools, ExpansionHook]:
    hook = ExpansionHook(mem.long_term("u1"), model, background=background)
    return MemoryTools(mem, scope="u1", session_id="s1", save_hook=hook), hook


def test_expansion_replaces_the_raw_entry_with_a_record_and_can_be_undone(mem: Memory) -> None:
    items = [
        {"content": "Lee's sister is called Ann", "category": "family", "tags": ["sister"]},
        {"content": " "},
        {"content": "Ann lives in Rome", "category": None},
    ]
    model = ScriptedChatModel(["<think>hmm [x]</think> Here: " + json.dumps(items) + " done"])
    tools, _ = _tools(mem, model)
    out = tools.dispatch("save_memory", json.dumps({"content": "my sister Ann lives in Rome", "tags": "fam"}))
    raw_id = out.split("'")[1]
    memory = mem.long_term("u1")
    assert memory.get(raw_id) is None
    assert sorted(e.content for e in memory.entries()) == ["Ann lives in Rome", "Lee's sister is called Ann"]
    note = model.calls[0]["messages"][1]["content"]
    assert "my sister Ann lives in Rome" in note and "Tags: fam" in note
    dreamer = Dreamer(memory)
    (record,) = dreamer.history()
    assert record.kind == "expand" and record.retired[0].entry.content == "my sister Ann lives in Rome"
    dreamer.undo(record.id)
    assert [e.content for e in memory.entries()] == ["my sister Ann lives in Rome"]


@pytest.mark.parametrize("reply", ["[]", "no idea", '[{"content": 3}]', None])
def test_fallback_keeps_the_raw_content_once(mem: Memory, reply: str | None) -> None:
    tools, _ = _tools(mem, ScriptedChatModel([] if reply is None else [reply]))
    out = tools.dispatch("save_memory", json.dumps({"content": "remember the milk", "category": " shop "}))
    assert out.startswith("Memory saved with id")
    (entry,) = mem.long_term("u1").entries()
    assert entry.content == "remember the milk" and entry.category == "shop"
    assert Dreamer(mem.long_term("u1")).history() == []


def test_background_expansion_over_a_real_http_model(mem: Memory) -> None:
    from memstack.llm.chat import ChatClient

    with fake_openai([json.dumps([{"content": "Max owns a red bike"}])]) as server:
        hook = ExpansionHook(mem.long_term("u1"), ChatClient(server.url, "m", retries=0))
        tools = MemoryTools(mem, scope="u1", session_id="s1", save_hook=hook)
        tools.dispatch("save_memory", json.dumps({"content": "max bike red"}))
        hook.flush(10)
    assert [e.content for e in mem.long_term("u1").entries()] == ["Max owns a red bike"]


def test_an_entry_edited_before_the_expansion_is_left_alone(mem: Memory) -> None:
    memory = mem.long_term("u1")
    saved = memory.save(content="draft")
    memory.save(id=saved.id, content="final words")
    hook = ExpansionHook(memory, ScriptedChatModel(['[{"content": "expanded"}]']), background=False)
    assert hook.expand(saved) is None
    assert [e.content for e in memory.entries()] == ["final words"]


def test_the_service_tools_expand_when_a_chat_model_is_configured(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstack.ops.tools import run_tool
    from memstack.services.dream.expand import _shared_executor

    with fake_openai([json.dumps([{"content": "Ivy's birthday is 3 May"}])]) as server:
        monkeypatch.setenv("MEMSTACK_CHAT_URL", server.url)
        monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "m")
        out = run_tool(mem, "save_memory", {"content": "ivy bday may 3"}, scope="ivy")
        assert out.startswith("Memory saved with id")
        _shared_executor().submit(lambda: None).result(10)  # one worker: the expansion ran before
    assert [e.content for e in mem.long_term("ivy").entries()] == ["Ivy's birthday is 3 May"]
    monkeypatch.delenv("MEMSTACK_CHAT_URL")
    assert run_tool(mem, "save_memory", {"content": "x"}, scope="ivy").startswith("Error:")  # half-configured


def test_mem_dream_accessor(mem: Memory) -> None:
    mem.turns.add("s", "user", "I told you twice: no emojis!", subject="acc")
    dreamer = mem.dream("acc", model=ScriptedChatModel(['{"toSave": [{"content": "No emojis"}]}']))
    record = dreamer.infer_preferences()
    assert record is not None and dreamer.scope == "acc"
    assert [e.content for e in mem.long_term("acc").entries()] == ["No emojis"]


class _HeldInParent(ScriptedChatModel):
    """Scripted replies that the process which made it waits for until ``gate`` is set (a child
    made by ``fork`` answers at once)."""

    def __init__(self, replies: list[str], gate: threading.Event) -> None:
        super().__init__(replies)
        self.gate, self.parent = gate, os.getpid()

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        if os.getpid() == self.parent:
            self.gate.wait()
        return super().complete(messages, tools, **options)


def test_a_forked_child_expands_its_own_saves() -> None:
    """The parent's expansion thread does not run in a child made by ``fork``, nor does the child
    wait for what the parent queued: its own saves get a thread of their own (memory:// is the
    process's own, so the child checks its copy)."""
    mem = memstack.open("memory://")
    memory, gate = mem.long_term("u1"), threading.Event()
    hook = ExpansionHook(memory, _HeldInParent(['[{"content": "expanded"}]'] * 2, gate))
    hook(memory.save(content="the parent's note"))  # queued: the parent's thread waits at the gate

    def child() -> bool:
        hook(memory.save(content="the child's note"))
        hook.flush(30)
        return sorted(e.content for e in memory.entries()) == ["expanded", "the parent's note"]

    try:
        assert in_child(child)  # stuck on the parent's thread: killed, False
    finally:
        gate.set()
    hook.flush(30)
    assert [e.content for e in memory.entries()] == ["expanded"]  # the parent expanded its own
    mem.close()
