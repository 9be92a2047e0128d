"""The scheduler runs the extract pass per user, only for users with unread turns, each debounced
on their own turns, and a pass reads only the conversations that changed since its cursor; on
every engine."""

from __future__ import annotations

import json

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import InvalidValue
from memstack.services.dream.scheduler import DreamScheduler
from memstack.services.dream.sources import pass_turns
from memstack.tiers.conversation.activity import activity, users_with_turns
from services.dream._openai_server import fake_openai
from services.dream.test_http_model import client

NOTHING = json.dumps({"facts": []})


def _said(server: object) -> list[str]:
    return [json.dumps(r["messages"]) for r in server.requests]  # type: ignore[attr-defined]


def test_users_without_a_scope_are_found_and_only_users_with_new_turns_run(
    mem: Memory, clock: ManualClock
) -> None:
    mem.conversations.append("carol-1", "user", "carol likes plums", subject="carol")
    mem.conversations.append("nobody", "user", "words of nobody")
    assert mem.long_term("carol").entries() == []  # a conversation, no scope yet
    assert users_with_turns(mem.engine) == ["carol"]
    with fake_openai([NOTHING, NOTHING, NOTHING]) as server:
        scheduler = DreamScheduler(mem, interval=60, model=client(server.url), passes=["extract"], quiet=10)
        assert scheduler.scopes() == [] and scheduler.users() == ["carol"]
        assert scheduler.run_once() == [] and server.requests == []  # carol spoke a moment ago
        clock.advance(10)
        scheduler.run_once()
        assert len(server.requests) == 1 and "plums" in _said(server)[0]
        clock.advance(60)
        scheduler.run_once()
        assert len(server.requests) == 1  # nothing new: no pass, no model call
        mem.conversations.append("dan-1", "user", "dan rides a bike", subject="dan")
        clock.advance(5)
        mem.conversations.append("carol-2", "user", "carol now likes pears", subject="carol")
        clock.advance(6)  # dan idle 11 s, carol 6 s: dan's turn delays only dan, carol's only carol
        scheduler.run_once()
        assert len(server.requests) == 2 and "bike" in _said(server)[1] and "carol" not in _said(server)[1]
        clock.advance(4)
        scheduler.run_once()
        assert len(server.requests) == 3
        last = _said(server)[2]
        assert "pears" in last and "plums" not in last and "bike" not in last


def test_a_pass_reads_only_the_conversations_changed_since_its_cursor(
    mem: Memory, clock: ManualClock
) -> None:
    mem.conversations.append("old", "user", "old words", subject="erin")
    clock.advance(5)
    since = mem.clock.now()
    mem.conversations.append("new", "user", "new words", subject="erin")
    assert set(activity(mem.engine, "erin")) == {"old", "new"}
    everything = pass_turns("erin", None, conversations=mem.conversations, turns=None)
    recent = pass_turns("erin", None, conversations=mem.conversations, turns=None, since=since)
    assert [t["content"] for t in everything] == ["old words", "new words"]
    assert [t["content"] for t in recent] == ["new words"]


def test_forgetting_a_user_drops_their_turn_index(mem: Memory) -> None:
    mem.conversations.append("f-1", "user", "forget me", subject="frank")
    assert users_with_turns(mem.engine) == ["frank"]
    mem.forget(subject="frank")
    assert users_with_turns(mem.engine) == [] and activity(mem.engine, "frank") == {}


def test_a_pass_naming_another_users_conversation_is_refused(mem: Memory) -> None:
    mem.conversations.append("a-chat", "user", "alice's pin is 1234", subject="alice")
    mem.conversations.append("loose", "user", "words of nobody")
    with fake_openai([NOTHING]) as server:
        bob = mem.dream("bob", model=client(server.url))
        with pytest.raises(InvalidValue, match="a-chat"):
            bob.extract(sessions=["a-chat"])
        with pytest.raises(InvalidValue, match="a-chat"):
            bob.extract(sessions=["loose", "a-chat"])
        assert server.requests == []  # nothing of alice's was read, nor anything else
        assert bob.extract(sessions=["loose"]) is not None  # an unlabelled conversation it names
    assert "1234" not in json.dumps(server.requests) and "nobody" in json.dumps(server.requests)
    assert (
        pass_turns("alice", ["a-chat"], conversations=mem.conversations, turns=None)[0]["subject"] == "alice"
    )
