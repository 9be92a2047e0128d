"""ConversationStore on every engine: branches, history, limits, files, errors."""

from __future__ import annotations

from typing import Any

import pytest

from memstack.engines import Engine
from memstack.foundation.clock import ManualClock
from memstack.foundation.errors import (
    AlreadyExists,
    EntryNotFound,
    InvalidKey,
    InvalidSessionId,
    InvalidValue,
)
from memstack.tiers.conversation import UUID_NIL, ConversationStore, FileRef


@pytest.fixture
def store(engine: Engine) -> ConversationStore:
    return ConversationStore(engine, counter="estimate")


def seed_002(store: ConversationStore, cid: str = "c1") -> None:
    """The regeneration example of seed 002: A'' regenerates the answer to A."""
    store.append(cid, "user", "A", message_id="A")
    store.append(cid, "assistant", "A1", message_id="A1")
    store.append(cid, "user", "B", message_id="B")
    store.append(cid, "assistant", "B1", message_id="B1")
    store.append(cid, "assistant", "A2", message_id="A2", parent_message_id="A")
    store.append(cid, "user", "C", message_id="C")
    store.append(cid, "assistant", "C1", message_id="C1")


def texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages]


def test_seed_002_regeneration_history_and_thread(store: ConversationStore) -> None:
    seed_002(store)
    assert texts(store.history("c1")) == ["A", "A2", "C", "C1"]
    assert [m["role"] for m in store.history("c1")] == ["user", "assistant", "user", "assistant"]
    assert [m.message_id for m in store.thread("c1")] == ["A", "A2", "C", "C1"]
    assert [m.message_id for m in store.thread("c1", "B1")] == ["A", "A1", "B", "B1"]
    assert texts(store.history("c1", "B1")) == ["A", "A1", "B", "B1"]
    assert store.count("c1") == 7
    assert store.thread_length("c1") == 4
    store.append("c1", "user", "D")  # in flight: not counted
    assert store.thread_length("c1") == 4
    assert store.thread_length("c1", "B") == 2


def test_default_parent_is_the_newest_message(store: ConversationStore) -> None:
    first = store.append("c1", "user", "hi")
    second = store.append("c1", "assistant", "hello")
    assert first.parent_message_id is None
    assert second.parent_message_id == first.message_id
    assert store.get("c1", second.message_id) == second


def test_in_flight_question_and_placeholder_are_dropped(store: ConversationStore) -> None:
    seed_002(store)
    question = store.append("c1", "user", "D")
    assert texts(store.history("c1")) == ["A", "A2", "C", "C1"]
    assert texts(store.history("c1", question.message_id)) == ["A", "A2", "C", "C1"]
    placeholder = store.append("c1", "assistant", "")
    assert placeholder.token_count == 0
    assert texts(store.history("c1")) == ["A", "A2", "C", "C1"]
    store.append("c1", "assistant", "D1", parent_message_id=question.message_id)
    assert texts(store.history("c1")) == ["A", "A2", "C", "C1", "D", "D1"]


def test_legacy_uuid_nil_messages_follow_creation_order(store: ConversationStore) -> None:
    for index in range(4):
        store.append("c1", "user" if index % 2 == 0 else "assistant", f"m{index}", parent_message_id=UUID_NIL)
    assert texts(store.history("c1")) == ["m0", "m1", "m2", "m3"]


def test_token_limit_prunes_oldest_whole_turns(store: ConversationStore) -> None:
    for index in range(5):
        store.append("c1", "user", f"q{index}", token_count=7)
        store.append("c1", "assistant", f"a{index}", token_count=7)
    # each message costs 7 + 3 overhead = 10: 45 tokens hold two whole turns
    assert texts(store.history("c1", max_token_limit=45)) == ["q3", "a3", "q4", "a4"]
    assert texts(store.history("c1", max_token_limit=19)) == ["a4"]
    assert texts(store.history("c1", max_token_limit=0)) == ["a4"]


@pytest.mark.parametrize(
    ("message_limit", "expected"), [(None, 500), (0, 500), (-3, 500), (9999, 500), (10, 10)]
)
def test_message_limit_defaults_and_cap(
    store: ConversationStore, message_limit: int | None, expected: int
) -> None:
    store.extend(
        "c1",
        [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(600)],
    )
    history = store.history("c1", max_token_limit=10**9, message_limit=message_limit)
    assert len(history) == expected
    assert history[-1]["content"] == "m599"


def test_message_limit_counts_stored_messages_before_thread_extraction(store: ConversationStore) -> None:
    seed_002(store)
    # the newest 4 stored messages are C1, C, A2, B1: only C1, C, A2 are on the thread
    assert texts(store.history("c1", message_limit=4)) == ["A2", "C", "C1"]
    assert [m.message_id for m in store.thread("c1", message_limit=4)] == ["A2", "C", "C1"]


def test_files_become_parts_before_the_text(store: ConversationStore) -> None:
    image = FileRef("image", "remote_url", url="https://example.test/cat.png")
    upload = {"type": "document", "transfer_method": "local_file", "upload_file_id": "f-1"}
    store.append("c1", "user", "what is this?", files=[image, upload])
    store.append("c1", "assistant", "a cat")
    first = store.history("c1")[0]
    assert first["content"] == [
        {"type": "image_url", "image_url": {"url": "https://example.test/cat.png", "detail": "high"}},
        {"type": "text", "text": "what is this?"},
    ]
    low = store.history("c1", image_detail="low")[0]
    assert low["content"][0]["image_url"]["detail"] == "low"
    assert store.history_text("c1") == "Human: [image]\nwhat is this?\nAssistant: a cat"

    def resolve(file: FileRef, detail: str) -> dict[str, Any] | None:
        if file.upload_file_id:
            return {"type": "file", "file": {"file_id": file.upload_file_id}}
        return None

    resolved = store.history("c1", resolver=resolve)[0]
    assert resolved["content"] == [
        {"type": "file", "file": {"file_id": "f-1"}},
        {"type": "text", "text": "what is this?"},
    ]
    stored = store.thread("c1")[0]
    assert stored.files == (image, FileRef.coerce(upload))


def test_history_text_prefixes_and_empty(store: ConversationStore) -> None:
    assert store.history_text("nobody") == ""
    assert store.history("nobody") == []
    store.append("c1", "system", "be brief")
    store.append("c1", "user", "hi")
    store.append("c1", "assistant", "hello")
    assert store.history_text("c1", human_prefix="U", ai_prefix="AI") == "U: hi\nAI: hello"


def test_values_round_trip_and_are_fresh_objects(store: ConversationStore) -> None:
    content = "123 — naïve “quotes” 🤖\n\ttabs"
    store.append("c1", "user", content, message_id="m1", workflow_run_id="run-1")
    one, two = store.history("c1", "m1"), store.thread("c1", "m1")
    assert two[0].content == content
    assert two[0].workflow_run_id == "run-1"
    assert one == []  # the only message is the in-flight question
    a = store.get("c1", "m1").to_dict()
    a["content"] = "changed"
    assert store.get("c1", "m1").content == content


def test_bad_input_is_refused_and_writes_nothing(store: ConversationStore) -> None:
    store.append("c1", "user", "q", message_id="q")
    with pytest.raises(AlreadyExists, match="'q'"):
        store.append("c1", "assistant", "again", message_id="q")
    with pytest.raises(EntryNotFound, match="'nope'"):
        store.append("c1", "assistant", "a", parent_message_id="nope")
    with pytest.raises(InvalidValue, match="'robot'"):
        store.append("c1", "robot", "a")
    with pytest.raises(InvalidValue, match="content"):
        store.append("c1", "user", 5)  # type: ignore[arg-type]
    with pytest.raises(InvalidSessionId, match="'bad id'"):
        store.append("bad id", "user", "a")
    with pytest.raises(InvalidKey, match="message_id"):
        store.append("c1", "user", "a", message_id="no spaces")
    with pytest.raises(InvalidValue, match="upload_file_id"):
        store.append("c1", "user", "a", files=[{"type": "image", "transfer_method": "local_file"}])
    with pytest.raises(AlreadyExists):
        store.extend(
            "c1",
            [
                {"role": "user", "content": "x", "message_id": "new"},
                {"role": "user", "content": "y", "message_id": "q"},
            ],
        )
    assert store.count("c1") == 1
    assert [m.message_id for m in store.thread("c1")] == ["q"]
    with pytest.raises(EntryNotFound, match="'ghost'"):
        store.history("c1", "ghost")


def test_extend_links_parents_within_the_call(store: ConversationStore, clock: ManualClock) -> None:
    made = store.extend(
        "c1",
        [
            {"role": "user", "content": "q", "message_id": "q"},
            {"role": "assistant", "content": "a", "message_id": "a"},
            {"role": "assistant", "content": "a2", "message_id": "a2", "parent_message_id": "q"},
        ],
    )
    assert [m.parent_message_id for m in made] == [None, "q", "q"]
    assert made[0].created_at == clock.now()
    assert texts(store.history("c1")) == ["q", "a2"]


def test_conversations_listing_and_delete(store: ConversationStore) -> None:
    seed_002(store, "c1")
    store.append("c2", "user", "x", message_id="n")
    assert store.conversations() == ["c1", "c2"]
    assert store.delete("c1") is True
    assert store.delete("c1") is False
    assert store.conversations() == ["c2"]
    assert store.history("c1") == []
    store.append("c1", "user", "again", message_id="A")  # ids are free again
    assert store.count("c1") == 1


def test_long_conversation_history_reads_pages(store: ConversationStore) -> None:
    # 350 messages with a regeneration branch every 10: the history crosses several pages
    rows: list[dict[str, Any]] = []
    for turn in range(100):
        rows.append({"role": "user", "content": f"q{turn}", "message_id": f"q{turn}"})
        rows.append({"role": "assistant", "content": f"bad{turn}", "message_id": f"bad{turn}"})
        if turn % 2 == 0:
            rows.append(
                {
                    "role": "assistant",
                    "content": f"a{turn}",
                    "message_id": f"a{turn}",
                    "parent_message_id": f"q{turn}",
                }
            )
        else:
            rows[-1]["content"] = f"a{turn}"
            rows[-1]["message_id"] = f"a{turn}"
    store.extend("c1", rows)
    history = store.history("c1", max_token_limit=10**9)
    expected = [t for turn in range(100) for t in (f"q{turn}", f"a{turn}")]
    assert texts(history) == expected[-len(history) :]
    assert len(history) == 2 * 100 - 0 or len(history) <= 500
    small = store.history("c1", max_token_limit=60)
    assert texts(small) == expected[-len(small) :]
    assert small[0]["role"] == "user"


def test_two_writers_keep_one_consistent_log(engine: Engine) -> None:
    first, second = (
        ConversationStore(engine, counter="estimate"),
        ConversationStore(engine, counter="estimate"),
    )
    x = first.append("c1", "user", "x")
    y = second.append("c1", "assistant", "y")
    z = first.append("c1", "user", "z")  # first's remembered tail is stale: re-read, parent is y
    assert (y.parent_message_id, z.parent_message_id) == (x.message_id, y.message_id)
    assert [m.message_id for m in first.messages("c1")] == [x.message_id, y.message_id, z.message_id]
    second.delete("c1")
    again = first.append("c1", "user", "fresh")  # the conversation vanished under first's cache
    assert again.parent_message_id is None
    assert second.count("c1") == 1


def test_concurrent_appends_lose_nothing(engine: Engine) -> None:
    import threading

    stores = [ConversationStore(engine, counter="estimate") for _ in range(4)]

    def write(store: ConversationStore, worker: int) -> None:
        for i in range(25):
            store.append("c1", "user", f"w{worker}-{i}", parent_message_id=None)

    threads = [threading.Thread(target=write, args=(s, n)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    messages = stores[0].messages("c1")
    assert len(messages) == 100 == stores[0].count("c1")
    assert len({m.message_id for m in messages}) == 100
    for position, message in enumerate(messages):
        assert stores[0].get("c1", message.message_id) == message, position


def test_history_cost_follows_the_window_not_the_conversation(engine: Engine) -> None:
    """Round trips and messages read are the same for 40 and 4,000 stored messages."""
    store = ConversationStore(engine, counter="estimate")
    for cid, count in (("small", 40), ("large", 4000)):
        store.extend(cid, [{"role": ("user", "assistant")[i % 2], "content": "x" * 40} for i in range(count)])
    calls: dict[str, list[int]] = {}
    real = engine.execute

    def measure(cid: str, **kwargs: Any) -> list[dict[str, Any]]:
        seen: list[int] = []

        def spy(ops):  # type: ignore[no-untyped-def] # records what reaches the real engine
            seen.append(len(ops))
            return real(ops)

        engine.execute = spy  # type: ignore[method-assign] # observe the real engine's batches
        try:
            return store.history(cid, **kwargs)
        finally:
            del engine.execute
            calls[cid] = seen

    small = measure("small", max_token_limit=300)
    large = measure("large", max_token_limit=300)
    assert len(small) == len(large) == 22  # 22 * (10 + 3) = 286 tokens
    assert calls["small"] == calls["large"] == [2]  # one batch: count + the newest page
    unlimited = measure("large", max_token_limit=10**9)
    assert len(unlimited) == 500
    assert len(calls["large"]) == 5  # 500 messages: five pages of 100
