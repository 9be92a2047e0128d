"""MemstackMemory as AutoGen's Memory, with autogen_core's own model context, on every engine."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("autogen_core", reason="the autogen extra is not installed")
pytest.importorskip("fastapi")

from autogen_core.memory import Memory as AutogenMemory
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.model_context import BufferedChatCompletionContext
from autogen_core.models import AssistantMessage, SystemMessage, UserMessage

from memstack import InvalidValue, Memory
from memstack.doors.integrations.autogen import MemstackMemory
from memstack.engines import Engine

from ._doors import default_tenant, http_door


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def text(content: str, **metadata: Any) -> MemoryContent:
    return MemoryContent(content=content, mime_type=MemoryMimeType.TEXT, metadata=metadata or None)


def test_add_query_update_context_and_other_doors(engine: Engine) -> None:
    mem = default_tenant(engine)
    memory = MemstackMemory(mem.long_term("ann"), subject="ann", limit=2)
    assert isinstance(memory, AutogenMemory)
    run(memory.add(text("Ann is vegetarian and loves lentil soup", source="chat")))
    run(memory.add(MemoryContent(content={"city": "Lyon", "since": 2019}, mime_type="application/json")))
    run(memory.add(text("Ann's meeting is on Tuesday")))

    found = run(memory.query("what soup does she like")).results
    assert found[0].content == "Ann is vegetarian and loves lentil soup"
    assert found[0].metadata["source"] == "chat" and found[0].metadata["score"] > 0
    as_json = run(memory.query(MemoryContent(content="Lyon", mime_type=MemoryMimeType.TEXT))).results
    assert (
        as_json[0].content == {"city": "Lyon", "since": 2019} and as_json[0].mime_type == "application/json"
    )

    context = BufferedChatCompletionContext(buffer_size=10)
    run(context.add_message(UserMessage(content="any soup ideas for dinner?", source="ann")))
    updated = run(memory.update_context(context))
    assert [m.content for m in updated.memories.results] == ["Ann is vegetarian and loves lentil soup"]
    messages = run(context.get_messages())
    assert isinstance(messages[-1], SystemMessage) and "lentil soup" in messages[-1].content

    with http_door(engine) as client:
        listed = client.get("/v1/memories", params={"scope": "ann", "query": "meeting"}).json()["items"]
        assert [h["entry"]["content"] for h in listed] == ["Ann's meeting is on Tuesday"]
    assert mem.forget(subject="ann").remaining == 0
    assert run(memory.query("")).results == []


def test_update_context_without_a_user_message_adds_nothing(mem: Memory) -> None:
    memory = MemstackMemory(mem.long_term("bob"))
    run(memory.add(text("bob plays chess")))
    context = BufferedChatCompletionContext(buffer_size=5)
    run(context.add_message(AssistantMessage(content="hello", source="bot")))
    assert run(memory.update_context(context)).memories.results == []
    assert len(run(context.get_messages())) == 1


def test_clear_empties_only_its_scope_and_close_keeps_memstack_open(mem: Memory) -> None:
    mine, other = MemstackMemory(mem.long_term("a")), MemstackMemory(mem.long_term("b"))
    run(mine.add(text("tea")))
    run(other.add(text("tea")))
    run(mine.clear())
    run(mine.close())
    assert run(mine.query("tea")).results == [] and len(run(other.query("tea")).results) == 1


def test_bad_input_is_refused(mem: Memory) -> None:
    memory = MemstackMemory(mem.long_term("c"))
    with pytest.raises(InvalidValue, match="bytes"):
        run(memory.add(MemoryContent(content=b"raw", mime_type=MemoryMimeType.BINARY)))
    with pytest.raises(InvalidValue, match="limit"):
        MemstackMemory(mem.long_term("c"), limit=0)
    with pytest.raises(TypeError, match="LongTermMemory"):
        MemstackMemory(object())  # type: ignore[arg-type]
    assert mem.long_term("c").entries() == []
