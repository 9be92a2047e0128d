"""MemstackMemoryBlock inside LlamaIndex's own Memory: flushed messages are recalled later."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory

from memstack import Memory
from memstack.doors.integrations.llamaindex import MemstackMemoryBlock


def test_flushed_messages_become_recallable(mem: Memory) -> None:
    long_term = mem.long_term("alice")
    block = MemstackMemoryBlock(name="memstack", long_term=long_term, max_results=2)  # the old name of limit

    async def conversation() -> str:
        memory = LlamaMemory.from_defaults(
            session_id="s1",
            token_limit=80,
            chat_history_token_ratio=0.5,
            token_flush_size=20,
            memory_blocks=[block],
        )
        try:
            await memory.aput(
                ChatMessage(role="user", content="My dog is called Rex and he loves squeaky toys")
            )
            await memory.aput(ChatMessage(role="assistant", content="Rex sounds like a happy dog"))
            for i in range(6):  # LlamaIndex flushes whole turns out of its short-term window
                await memory.aput(ChatMessage(role="user", content=f"tell me about the weather on day {i}"))
                await memory.aput(ChatMessage(role="assistant", content=f"day {i} will be sunny and mild"))
            await memory.aput(ChatMessage(role="user", content="what is my dog called?"))
            return str((await memory.aget())[0].content)
        finally:
            # LlamaIndex never closes its aiosqlite store; dispose it so no connection leaks.
            await memory.sql_store._async_engine.dispose()

    system = asyncio.run(conversation())
    assert any("Rex" in e.content for e in long_term.entries()), "the first turn was flushed to memstack"
    assert "<memstack>" in system and "user: My dog is called Rex" in system


def test_block_rejects_other_objects() -> None:
    with pytest.raises(TypeError, match="LongTermMemory"):
        MemstackMemoryBlock(name="x", long_term=object())


def test_recall_takes_the_search_parameters_of_every_surface(mem: Memory) -> None:
    long_term = mem.long_term("bob")
    long_term.save(content="green tea every morning", category="food/drinks", tags=["daily"])
    long_term.save(content="green tea ice cream", category="food/desserts", tags=["treat"])
    long_term.save(content="green paint for the fence", category="house", metadata={"room": "garden"})
    question = [ChatMessage(role="user", content="green tea")]

    def recall(**options: object) -> str:
        block = MemstackMemoryBlock(name="m", long_term=long_term, **options)  # type: ignore[arg-type]
        return asyncio.run(block._aget(question))

    assert recall(category="food").count("- ") == 2
    assert recall(tags=["treat"]) == "- green tea ice cream"
    assert recall(limit=1).count("- ") == 1
    assert recall(metadata={"room": "garden"}, mode="bm25") == "- green paint for the fence"
    assert recall(min_score=1e9) == ""


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"mode": "semantic"}, "mode"),
        ({"tags": ["x" * 300]}, "tags"),
        ({"metadata": {"k": float("nan")}}, "metadata"),
    ],
)
def test_bad_search_parameters_are_refused_when_the_block_is_made(
    mem: Memory, option: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):  # pydantic wraps memstack's InvalidValue (a ValueError)
        MemstackMemoryBlock(name="m", long_term=mem.long_term("x"), **option)  # type: ignore[arg-type]
