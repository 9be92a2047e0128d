"""The memory loop on every engine: remember makes turns searchable at once, a scripted loopback
model extracts facts for ONE user from their conversations only, recall answers them with their
message ids, and forget(subject=…) leaves no byte of them anywhere."""

from __future__ import annotations

import json

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import AlreadyExists, InvalidValue
from memstack.services.loop import MemoryLoop
from services.dream._openai_server import fake_openai
from services.dream.test_http_model import client

PIN = "9911-PIN-OF-BOB"
ADD = json.dumps({"decisions": [{"fact": 1, "action": "add"}]})


def facts(*items: dict[str, object]) -> str:
    return json.dumps({"facts": list(items)})


def test_remembered_turns_are_searchable_at_once_with_provenance(mem: Memory) -> None:
    loop = MemoryLoop(mem)
    done = loop.remember(
        [{"role": "user", "content": "I keep bees in Porto"}, {"role": "assistant", "content": "Lovely!"}],
        user="alice",
    )
    assert not done.queued and len(done.messages) == 2 and len(done.entries) == 2
    (first, *_) = loop.recall("bees", user="alice")
    assert first.kind == "turn" and first.entry.content == "user: I keep bees in Porto"
    assert first.conversations == (done.conversation,) and first.message_ids == (done.messages[0].message_id,)
    assert first.entry.subject == "alice"
    assert loop.recall("bees", user="bob") == []  # another user's scope holds nothing of hers
    assert mem.conversations.count(done.conversation) == 2


def test_remember_refuses_another_users_conversation_and_bad_input(mem: Memory) -> None:
    loop = MemoryLoop(mem)
    loop.remember("hello", user="alice", conversation="shared")
    with pytest.raises(AlreadyExists, match="another user"):
        loop.remember("hijack", user="bob", conversation="shared")
    mem.conversations.append("nobodys", "user", "unlabelled")
    with pytest.raises(AlreadyExists):
        loop.remember("mine now", user="bob", conversation="nobodys")
    with pytest.raises(InvalidValue):
        loop.remember([], user="bob")
    with pytest.raises(InvalidValue):
        loop.remember([{"content": "no role"}], user="bob")
    assert mem.conversations.count("shared") == 1 and loop.recall("hijack", user="bob") == []


def test_two_users_extract_reads_only_its_users_conversation_then_forget(
    mem: Memory, clock: ManualClock
) -> None:
    mem.long_term("alice").save(content="Alice likes tea", subject="alice")
    alice = MemoryLoop(mem, debounce=10)  # no background thread: the test runs the due passes
    with fake_openai([]) as server:
        alice.model = client(server.url)
        mine = alice.remember("I moved to Berlin last week", user="alice", conversation="a-chat")
        alice.remember(f"my bank PIN is {PIN}", user="bob", conversation="b-chat")
        assert alice.due() == []  # debounced: not yet
        clock.advance(10)
        assert alice.due() == ["alice", "bob"]
        moved = mine.messages[0].message_id
        server.script += [facts({"content": "Alice lives in Berlin", "sourceIds": [moved]}), ADD]
        server.script += [facts({"content": f"The user's PIN is {PIN}", "sourceIds": ["x"]})]
        records = alice.run_due()
    extract, decide = (json.dumps(r["messages"]) for r in server.requests[:2])  # alice's pass: first
    assert "I moved to Berlin last week" in extract  # her own conversation reaches her pass...
    assert PIN not in extract and PIN not in decide  # ...and bob's never does
    assert PIN in json.dumps(server.requests[2]["messages"])  # bob's own pass reads his
    assert (records[0].scope, records[0].kind, records[0].status) == ("alice", "extract", "applied")
    for entry in mem.long_term("alice").entries():
        cited = set((entry.metadata or {}).get("message_ids", []))
        assert entry.subject == "alice" and PIN not in entry.content
        assert not cited - {m.message_id for m in mine.messages}
    found = [r for r in alice.recall("where does Alice live Berlin", user="alice") if r.kind == "fact"]
    assert found and found[0].message_ids == (moved,) and found[0].conversations == ("a-chat",)
    report = mem.forget(subject="alice")
    assert report.remaining == 0
    assert alice.recall("Berlin", user="alice") == []
    assert not any("Berlin" in text for _, text in mem.engine.raw_items())
    assert any(PIN in text for _, text in mem.engine.raw_items())  # bob's is his: untouched
