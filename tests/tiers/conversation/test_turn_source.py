"""Turns recorded through the turn log live in conversations (one source of turns for the
passes), and the log entries written before that are migrated, idempotently; on every engine."""

from __future__ import annotations

import json

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import InvalidValue
from memstack.services.dream.sources import pass_turns, user_conversations
from memstack.tiers.conversation import turn_source
from memstack.tiers.conversation.turn_source import migrate_turn_log
from memstack.tiers.conversation.turns import _LOG


def _legacy(mem: Memory, **entry: object) -> None:
    """A log entry as written before turns went to conversations (no conversation copy)."""
    mem.engine.rpush(mem.turns._base + _LOG, json.dumps(entry))


def test_a_recorded_turn_is_in_its_users_conversation(mem: Memory) -> None:
    mem.turns.add("chat-1", "user", "I sail on Sundays", subject="alice", message_id="m1")
    mem.turns.add("chat-1", "user", "bob words in the same session", subject="bob", message_id="m2")
    mem.turns.add("chat-1", "user", "nobody's words", message_id="m3")
    mem.turns.add("chat-2", "user", "loose words", message_id="m4")
    assert user_conversations(mem.engine, "alice") == ["chat-1"]
    assert [m.content for m in mem.conversations.messages("chat-1")] == ["I sail on Sundays"]
    assert [t["content"] for t in pass_turns("alice", None, conversations=mem.conversations, turns=None)] == [
        "I sail on Sundays"
    ]
    assert [t["content"] for t in pass_turns("bob", None, conversations=mem.conversations, turns=None)] == [
        "bob words in the same session"
    ]
    with pytest.raises(InvalidValue, match="chat-1"):  # the name is alice's conversation too
        pass_turns("carol", ["chat-1"], conversations=mem.conversations, turns=None)
    named = pass_turns("carol", ["chat-2"], conversations=mem.conversations, turns=None)
    assert [t["content"] for t in named] == ["loose words"]  # unlabelled: only when named
    assert pass_turns("carol", None, conversations=mem.conversations, turns=None) == []
    assert [t.content for t in mem.turns.recent("chat-1")][-1] == "nobody's words"  # the window stays


def test_old_log_entries_are_migrated_once_with_their_time_and_id(mem: Memory, clock: ManualClock) -> None:
    at = clock.now() - 1000
    _legacy(
        mem,
        session_id="s1",
        role="user",
        content="alice likes figs",
        timestamp=at,
        message_id="a1",
        subject="alice",
    )
    _legacy(
        mem,
        session_id="s1",
        role="user",
        content="bob likes kiwis",
        timestamp=at + 1,
        message_id="b1",
        subject="bob",
    )
    _legacy(mem, session_id="s/2", role="user", content="nobody likes dust", timestamp=at + 2)
    assert pass_turns("alice", None, conversations=mem.conversations, turns=None) == []  # not there yet
    assert migrate_turn_log(mem.turns.log_entries(), mem.conversations) == 3
    assert migrate_turn_log(mem.turns.log_entries(), mem.conversations) == 0  # idempotent
    (alice,) = pass_turns("alice", None, conversations=mem.conversations, turns=None)
    assert (alice["content"], alice["message_id"], alice["timestamp"]) == ("alice likes figs", "a1", at)
    (bob,) = pass_turns("bob", None, conversations=mem.conversations, turns=None)
    assert bob["content"] == "bob likes kiwis" and bob["session_id"] != "s1"  # never mixed with alice's
    assert [
        t["content"] for t in pass_turns("carol", ["s/2"], conversations=mem.conversations, turns=None)
    ] == ["nobody likes dust"]
    assert pass_turns("carol", None, conversations=mem.conversations, turns=None) == []


def test_a_log_mixing_copied_and_old_entries_copies_exactly_the_old_ones(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(turn_source, "_CHUNK", 2)  # several lookups per conversation
    for n in range(5):
        mem.turns.add("s1", "user", f"said now {n}", subject="alice", message_id=f"now{n}")
        _legacy(
            mem,
            session_id="s1",
            role="user",
            content=f"said before {n}",
            message_id=f"old{n}",
            subject="alice",
        )
        mem.turns.add(
            "s1", "user", f"bob now {n}", subject="bob", message_id=f"bnow{n}"
        )  # his own conversation
    _legacy(mem, session_id="s1", role="user", content="bob before", message_id="bold", subject="bob")
    assert migrate_turn_log(mem.turns.log_entries(), mem.conversations) == 6
    assert migrate_turn_log(mem.turns.log_entries(), mem.conversations) == 0
    alice = [t["content"] for t in pass_turns("alice", None, conversations=mem.conversations, turns=None)]
    assert sorted(alice) == sorted(
        [f"said now {n}" for n in range(5)] + [f"said before {n}" for n in range(5)]
    )
    bob = [t["content"] for t in pass_turns("bob", None, conversations=mem.conversations, turns=None)]
    assert sorted(bob) == sorted([f"bob now {n}" for n in range(5)] + ["bob before"])
