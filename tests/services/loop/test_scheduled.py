"""The dream scheduler of a service runs the extract pass of each user's scope over that user's
turns only, on every engine."""

from __future__ import annotations

import json

from memstack import ManualClock, Memory
from memstack.services.dream.scheduler import ACTIVITY_WINDOW, DreamScheduler
from services.dream._openai_server import fake_openai
from services.dream.test_http_model import client

SECRET = "bob-secret-4242"


def test_scheduled_extract_passes_read_one_user_each(mem: Memory, clock: ManualClock) -> None:
    alice = mem.remember("I play the violin", user="alice", conversation="a-chat")
    mem.remember(f"my locker code is {SECRET}", user="bob", conversation="b-chat")
    mem.conversations.append("nobody", "user", "unlabelled words of nobody")
    violin = alice.messages[0].message_id
    found = json.dumps({"facts": [{"content": "Alice plays the violin", "sourceIds": [violin]}]})
    add = json.dumps({"decisions": [{"fact": 1, "action": "add"}]})
    clock.advance(ACTIVITY_WINDOW + 1)
    with fake_openai([found, add, json.dumps({"facts": []})]) as server:
        scheduler = DreamScheduler(mem, interval=3600, model=client(server.url), passes=["extract"])
        assert scheduler.scopes() == ["alice", "bob"]
        records = scheduler.run_once()
    prompts = [json.dumps(r["messages"]) for r in server.requests]
    assert "violin" in prompts[0] and SECRET not in prompts[0] and SECRET not in prompts[1]
    assert SECRET in prompts[2] and "violin" not in prompts[2]
    assert not any("unlabelled" in p for p in prompts)  # a conversation of nobody: read by no pass
    applied = [r for r in records if r.scope == "alice"]
    assert [c.message_ids for c in applied[0].created] == [(violin,)]
    assert all(e.subject == "alice" for e in mem.long_term("alice").entries())
    assert SECRET not in json.dumps([e.content for e in mem.long_term("alice").entries()])
