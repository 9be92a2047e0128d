"""A remember that dies between its conversation append and its indexing leaves no turn
unsearchable: the user's first remember after the grace indexes them first, and one within it
leaves them to the call that may still be running; on every engine."""

from __future__ import annotations

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import AlreadyExists
from memstack.services.loop import MemoryLoop, pending
from memstack.services.loop.service import default_conversation


def _died_after_append(mem: Memory, user: str, words: str) -> None:
    """What a remember leaves when its process dies right after the append: the note, and the
    message in the conversation, but no entry."""
    conversation = default_conversation(user)
    start = mem.conversations.count(conversation)
    pending.note(mem.engine, user, conversation, start)
    mem.conversations.extend(conversation, [{"role": "user", "content": words}], subject=user)


def test_the_first_remember_after_the_grace_indexes_what_a_dead_one_appended(
    mem: Memory, clock: ManualClock
) -> None:
    loop = MemoryLoop(mem)
    loop.remember("I grow tomatoes", user="alice")
    _died_after_append(mem, "alice", "my cat is called Miso")
    assert loop.recall("Miso cat", user="alice") == []  # stored, not searchable
    assert pending.notes(mem.engine, "alice") == [(default_conversation("alice"), 1)]
    # Within the grace the note may be a call still running elsewhere: left to it.
    clock.advance(pending.GRACE - 1)
    loop.remember("I walk the dog", user="alice")
    assert loop.recall("Miso cat", user="alice") == []
    assert pending.notes(mem.engine, "alice") == [(default_conversation("alice"), 1)]
    clock.advance(1)
    loop.remember("I ride to work", user="alice")
    (hit, *_) = loop.recall("Miso cat", user="alice")
    assert hit.kind == "turn" and hit.entry.content == "user: my cat is called Miso"
    assert hit.message_ids == (mem.conversations.messages(default_conversation("alice"))[1].message_id,)
    assert pending.notes(mem.engine, "alice") == []
    assert len(mem.long_term("alice").entries()) == 4  # tomatoes, dog, Miso, ride: nothing twice


def test_a_refused_append_leaves_no_note_and_forget_drops_the_notes(mem: Memory) -> None:
    loop = MemoryLoop(mem)
    loop.remember([{"role": "user", "content": "hi", "message_id": "m1"}], user="bob")
    with pytest.raises(AlreadyExists):
        loop.remember([{"role": "user", "content": "again", "message_id": "m1"}], user="bob")
    assert pending.notes(mem.engine, "bob") == []
    _died_after_append(mem, "bob", "a secret of bob's")
    mem.forget(subject="bob")
    assert pending.notes(mem.engine, "bob") == []
    left = [key for key, value in mem.engine.raw_items() if "subj:" in key or "secret" in value]
    assert left == []


def test_a_remember_leaves_the_turns_of_a_running_call_to_it(mem: Memory) -> None:
    # One call's note, taken a moment ago, as a call still indexing in another process leaves it.
    loop = MemoryLoop(mem)
    loop.remember("I grow tomatoes", user="carol")
    conversation = default_conversation("carol")
    pending.note(mem.engine, "carol", conversation, 1)
    mem.conversations.extend(conversation, [{"role": "user", "content": "my bike is red"}], subject="carol")
    loop.remember("I like figs", user="carol")
    # Left to the running call: indexing it here too could race that call's own save of it.
    assert "user: my bike is red" not in [entry.content for entry in mem.long_term("carol").entries()]
    (message,) = mem.conversations.messages(conversation, 1, 1)
    loop._index("carol", conversation, [message], 1)  # the running call ends its work
    pending.done(mem.engine, "carol", conversation, 1)
    contents = sorted(entry.content for entry in mem.long_term("carol").entries())
    assert contents == ["user: I grow tomatoes", "user: I like figs", "user: my bike is red"]
