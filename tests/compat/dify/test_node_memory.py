"""NodeMemory on every engine: thread-aware turns, atomic flush, clear, modes, config errors."""

from __future__ import annotations

import pytest

from memstack import Memory
from memstack.compat.dify import NodeMemory
from memstack.foundation.errors import EntryNotFound, InvalidConfiguration, InvalidKey, InvalidValue
from memstack.tiers.conversation import ConversationStore

IMAGE = {"type": "image", "transfer_method": "remote_url", "url": "https://example.test/x.png"}


def run(
    store: ConversationStore, cid: str, run_id: str, question: str, answer: str, parent: str | None = "latest"
) -> str:
    """One chatflow run: the conversation's user and assistant messages, tagged with the run id."""
    kwargs = {} if parent == "latest" else {"parent_message_id": parent}
    q = store.append(cid, "user", question, message_id=f"q-{run_id}", workflow_run_id=run_id, **kwargs)
    store.append(cid, "assistant", answer, message_id=f"a-{run_id}", workflow_run_id=run_id)
    return q.message_id


@pytest.fixture
def store(mem: Memory) -> ConversationStore:
    return mem.conversations


def contents(messages: list[dict[str, object]]) -> list[object]:
    return [m["content"] for m in messages]


def test_turns_follow_the_thread_in_order(mem: Memory, store: ConversationStore) -> None:
    node = mem.node_memory("app", "c1", "llm-1")
    for run_id in ("r1", "r2", "r3"):
        run(store, "c1", run_id, f"Q{run_id}", f"A{run_id}")
        node.add_messages(run_id, f"node-q-{run_id}", [], f"node-a-{run_id}", [])
    node.flush()
    assert contents(node.get_history_prompt_messages()) == [
        "node-q-r1", "node-a-r1", "node-q-r2", "node-a-r2", "node-q-r3", "node-a-r3",
    ]  # fmt: skip
    # regenerate from r1's question: the thread is now r1 → r4 and r2, r3 leave the history
    store.append(
        "c1", "assistant", "again", message_id="a-r4", parent_message_id="q-r1", workflow_run_id="r4"
    )
    node.add_messages("r4", "node-q-r4", None, "node-a-r4", None)
    node.flush()
    assert contents(node.get_history_prompt_messages()) == [
        "node-q-r1",
        "node-a-r1",
        "node-q-r4",
        "node-a-r4",
    ]
    older = node.get_history_prompt_messages(current_message_id="a-r2")
    assert contents(older) == ["node-q-r1", "node-a-r1", "node-q-r2", "node-a-r2"]


def test_runs_without_a_turn_are_skipped_and_in_flight_run_dropped(
    mem: Memory, store: ConversationStore
) -> None:
    node = mem.node_memory("app", "c1", "llm-1")
    run(store, "c1", "r1", "Q1", "A1")
    run(store, "c1", "r2", "Q2", "A2")  # this node did not run in r2
    node.add_messages("r1", "q1", [], "a1", [])
    node.flush()
    store.append("c1", "user", "Q3", workflow_run_id="r3")  # the current request
    node.add_messages("r3", "q3", [], "a3", [])
    assert contents(node.get_history_prompt_messages()) == ["q1", "a1"]


def test_buffer_is_invisible_to_others_until_flush(mem: Memory, store: ConversationStore) -> None:
    writer = mem.node_memory("app", "c1", "llm-1")
    reader = mem.node_memory("app", "c1", "llm-1")
    run(store, "c1", "r1", "Q1", "A1")
    run(store, "c1", "r2", "Q2", "A2")
    writer.add_messages("r1", "q1", [IMAGE], "a1", [])
    writer.add_messages("r2", "q2", [], "a2", [])
    assert writer.exists()
    assert not reader.exists()
    assert reader.get_history_prompt_messages() == []
    assert len(writer.get_history_prompt_messages()) == 4  # its own buffer is visible to it
    writer.flush()
    history = reader.get_history_prompt_messages()
    assert history[0]["content"] == [
        {"type": "image_url", "image_url": {"url": "https://example.test/x.png", "detail": "high"}},
        {"type": "text", "text": "q1"},
    ]
    assert contents(history[1:]) == ["a1", "q2", "a2"]
    assert reader.document()["turns"]["r2"] == {
        "user_content": "q2", "user_files": [], "assistant_content": "a2", "assistant_files": [],
    }  # fmt: skip
    writer.flush()  # nothing pending: a no-op
    assert reader.document()["version"] == 1


def test_flush_writes_all_turns_in_one_batch(mem: Memory, store: ConversationStore) -> None:
    node = mem.node_memory("app", "c1", "llm-1")
    for run_id in ("r1", "r2", "r3"):
        node.add_messages(run_id, "q", [], "a", [])
    batches: list[int] = []
    engine = mem.engine
    real = engine.execute

    def spy(ops):  # type: ignore[no-untyped-def] # records what reaches the real engine
        batches.append(len(ops))
        return real(ops)

    engine.execute = spy  # type: ignore[method-assign] # observe the real engine's batches
    try:
        node.flush()
    finally:
        del engine.execute
    assert batches == [1]  # one hset of three fields
    assert set(node.document()["turns"]) == {"r1", "r2", "r3"}


def test_nodes_are_isolated_and_clear_forgets(mem: Memory, store: ConversationStore) -> None:
    first = mem.node_memory("app", "c1", "llm-1")
    second = mem.node_memory("app", "c1", "llm-2")
    run(store, "c1", "r1", "Q1", "A1")
    first.add_messages("r1", "one", [], "1", [])
    second.add_messages("r1", "two", [], "2", [])
    first.flush()
    second.flush()
    assert contents(first.get_history_prompt_messages()) == ["one", "1"]
    assert contents(second.get_history_prompt_messages()) == ["two", "2"]
    first.clear()
    assert not first.exists()
    assert first.get_history_prompt_messages() == []
    assert contents(second.get_history_prompt_messages()) == ["two", "2"]


def test_token_limit_prunes_whole_turns(mem: Memory, store: ConversationStore) -> None:
    node = mem.node_memory("app", "c1", "llm-1", token_counter=lambda text: len(text))
    for run_id in ("r1", "r2", "r3"):
        run(store, "c1", run_id, "Q", "A")
        node.add_messages(run_id, "x" * 7, [], "y" * 7, [])
    node.flush()
    # 10 tokens per message (7 + 3 overhead)
    assert len(node.get_history_prompt_messages(max_token_limit=45)) == 4
    assert len(node.get_history_prompt_messages(max_token_limit=19)) == 1
    default_limit = mem.node_memory("app", "c1", "llm-1", max_token_limit=25, token_counter=len)
    assert len(default_limit.get_history_prompt_messages()) == 2


def test_token_count_errors_return_the_untruncated_history(mem: Memory, store: ConversationStore) -> None:
    def broken(text: str) -> int:
        raise RuntimeError("tokenizer down")

    node = mem.node_memory("app", "c1", "llm-1", token_counter=broken)
    run(store, "c1", "r1", "Q", "A")
    node.add_messages("r1", "q", [], "a", [])
    node.flush()
    assert contents(node.get_history_prompt_messages(max_token_limit=1)) == ["q", "a"]


def test_conversation_mode_delegates_to_the_conversation(mem: Memory, store: ConversationStore) -> None:
    node = mem.node_memory("app", "c1", "llm-1", mode="conversation")
    run(store, "c1", "r1", "Q1", "A1")
    node.add_messages("r1", "ignored", [], "ignored", [])
    node.flush()
    node.clear()
    assert contents(node.get_history_prompt_messages()) == ["Q1", "A1"]
    assert node.get_history_prompt_text() == "Human: Q1\nAssistant: A1"
    assert node.exists()


def test_configuration_errors_name_the_field(mem: Memory, store: ConversationStore) -> None:
    with pytest.raises(InvalidConfiguration, match="conversation_id"):
        mem.node_memory("app", None, "llm-1")
    with pytest.raises(InvalidConfiguration, match="conversation_id"):
        NodeMemory(store, "app", "", "llm-1")
    with pytest.raises(InvalidConfiguration, match="'chat'"):
        mem.node_memory("app", "c1", "llm-1", mode="chat")
    with pytest.raises(InvalidKey, match="node_id"):
        mem.node_memory("app", "c1", "bad/node")
    node = mem.node_memory("app", "c1", "llm-1")
    with pytest.raises(InvalidValue, match="workflow_run_id"):
        node.add_messages("", "q", [], "a", [])
    with pytest.raises(InvalidValue, match="url"):
        node.add_messages("r1", "q", [{"type": "image", "transfer_method": "remote_url"}], "a", [])
    assert not node.exists()
    with pytest.raises(EntryNotFound):
        node.get_history_prompt_messages(current_message_id="ghost")
