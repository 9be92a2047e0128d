"""The async faces of conversations, sliding windows and node memory on every engine: same
results as the sync twin, storage work off the event loop thread, every public method twinned."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Iterator

import pytest

from memstack.compat.dify import AsyncNodeMemory, NodeMemory
from memstack.compat.n8n import AsyncSlidingWindows, SlidingWindows
from memstack.engines import Engine
from memstack.foundation.errors import EntryNotFound, InvalidConfiguration
from memstack.tiers.conversation import ConversationStore
from memstack.tiers.conversation.aio import AsyncConversationStore


@pytest.fixture
def store(engine: Engine) -> ConversationStore:
    return ConversationStore(engine, counter="estimate")


@pytest.fixture
def windows(engine: Engine) -> Iterator[SlidingWindows]:
    w = SlidingWindows(engine, cleanup_interval=None)
    yield w
    w.close()


def test_conversation_face_matches_the_sync_store(store: ConversationStore) -> None:
    async def run() -> None:
        face = store.aio
        await face.append("c1", "user", "A", message_id="A")
        await face.extend("c1", [{"role": "assistant", "content": "A1", "message_id": "A1"}])
        await face.append("c1", "assistant", "A2", message_id="A2", parent_message_id="A")
        assert await face.count("c1") == 3
        assert await face.conversations() == ["c1"]
        assert (await face.get("c1", "A2")).content == "A2"
        assert [m.message_id for m in await face.thread("c1")] == ["A", "A2"]
        assert await face.history("c1") == store.history("c1")
        assert await face.history_text("c1", token_budget=4096) == store.history_text("c1")
        assert await face.thread_length("c1") == store.thread_length("c1")
        assert [m.content for m in await face.messages("c1")] == ["A", "A1", "A2"]
        with pytest.raises(EntryNotFound):  # the sync twin's errors, unchanged
            await face.get("c1", "nope")
        assert await face.delete("c1") is True

    asyncio.run(run())


def test_storage_runs_off_the_event_loop_thread(engine: Engine) -> None:
    threads: set[int] = set()

    def counter(text: str) -> int:
        threads.add(threading.get_ident())
        return len(text)

    store = ConversationStore(engine, counter=counter)

    async def run() -> None:
        loop_thread = threading.get_ident()
        await asyncio.gather(*(store.aio.append(f"c{i}", "user", "hi") for i in range(8)))
        assert threads and loop_thread not in threads

    asyncio.run(run())
    assert sorted(store.conversations()) == [f"c{i}" for i in range(8)]


def test_window_face(windows: SlidingWindows) -> None:
    async def run() -> None:
        face = windows.aio
        await face.save("wf", {"session_id": "s1", "input": "q"}, {"output": "a"}, node_id="n1")
        loaded = await face.load("wf", {"session_id": "s1"}, node_id="n1")
        assert loaded == {
            "chat_history": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
        }
        out = await face.execute("wf", {"session_id": "s1", "prompt": "p"})
        assert out["stats"]["total_messages"] == 1
        assert len(await face.messages("wf", "s1", node_id="n1")) == 2
        assert (await face.sweep())["total_entries"] == 2
        assert await face.clear("wf", "s1", node_id="n1") is True
        with pytest.raises(InvalidConfiguration):
            await face.load("wf", {})
        await face.close()

    asyncio.run(run())


def test_node_memory_face(store: ConversationStore) -> None:
    store.append("c1", "user", "q", workflow_run_id="r1")
    store.append("c1", "assistant", "a", workflow_run_id="r1")
    node = NodeMemory(store, "app", "c1", "llm")

    async def run() -> None:
        face = node.aio
        await face.add_messages("r1", "node q", None, "node a", None)
        assert await face.exists() is True
        await face.flush()
        assert (await face.document())["turns"]["r1"]["user_content"] == "node q"
        assert await face.thread_run_ids() == ["r1"]
        messages = await face.get_history_prompt_messages()
        assert [m["content"] for m in messages] == ["node q", "node a"]
        assert await face.get_history_prompt_text() == "Human: node q\nAssistant: node a"
        await face.clear()
        assert await face.exists() is False

    asyncio.run(run())


@pytest.mark.parametrize(
    ("sync", "face", "not_io"),
    [
        (ConversationStore, AsyncConversationStore, set()),
        (SlidingWindows, AsyncSlidingWindows, {"session_id"}),  # pure: reads only its arguments
        (NodeMemory, AsyncNodeMemory, set()),
    ],
)
def test_every_public_method_has_a_twin(sync: type, face: type, not_io: set[str]) -> None:
    public = {n for n, v in vars(sync).items() if inspect.isfunction(v) and not n.startswith("_")}
    twinned = {n for n in vars(face) if not n.startswith("_")}
    assert public - not_io == twinned
