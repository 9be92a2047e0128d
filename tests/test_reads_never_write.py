"""Reads never write (issue 14, item 6): the keyspace, byte for byte, is the same before and after
every read-only call of the public API, on every engine, with good and odd-but-valid arguments."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from memstack import ContextBuilder, Memory
from memstack.foundation.clock import ManualClock
from memstack.foundation.errors import MemstackError
from memstack.services.transfer.dump import dump_lines
from memstack.tiers.conversation.turns import TurnMemory
from memstack.tiers.longterm import list_scopes
from memstack.tiers.longterm.tracker import InjectionTracker
from memstack.tiers.session.store import SessionStore
from memstack.tiers.shared import list_boards
from memstack.tiers.working import list_namespaces


def keyspace(mem: Memory) -> list[tuple[str, str, Any, bool]]:
    """Every key with its type, value and whether it expires (not the remaining time: it runs)."""
    return sorted(
        (line["key"], line["type"], repr(line["value"]), line["pttl"] is not None)
        for line in dump_lines(mem.engine)
    )


def seed(mem: Memory) -> None:
    mem.sessions.create("s1")
    mem.sessions.put("s1", "k", {"v": 1})
    mem.sessions.increment("s1", "n", 2)
    mem.conversations.append("c1", "user", "hello")
    alice = mem.long_term("alice")
    old = alice.save(content="Alice lives in Lisbon", ttl=600)
    alice.save(content="Alice lives in Berlin", supersedes=[old.id], expires_at=10**10)
    alice.save(content="Alice plays the violin", tags=["music"], category="hobby")
    mem.working("session/s1").set("draft", {"to": "bob"}, ttl=300)
    board = mem.shared("team")
    board["plan"] = ["research"]
    mem.turns.add("s1", "user", "where does alice play")


READS: list[tuple[str, Callable[[Memory], Any]]] = [
    ("sessions.list", lambda m: m.sessions.list()),
    ("sessions.exists", lambda m: m.sessions.exists("s1")),
    ("sessions.exists missing", lambda m: m.sessions.exists("nobody")),
    ("sessions.get", lambda m: m.sessions.get("s1", "k")),
    ("sessions.get missing", lambda m: m.sessions.get("nobody", "k")),
    ("sessions.items", lambda m: m.sessions.items("s1")),
    ("sessions.keys", lambda m: m.sessions.keys("s1")),
    ("sessions.history", lambda m: m.sessions.history("s1")),
    ("sessions.history missing", lambda m: m.sessions.history("nobody")),
    ("conversations.conversations", lambda m: m.conversations.conversations()),
    ("conversations.count", lambda m: m.conversations.count("c1")),
    ("conversations.messages", lambda m: m.conversations.messages("c1")),
    ("conversations.thread", lambda m: m.conversations.thread("c1")),
    ("conversations.thread missing", lambda m: m.conversations.thread("nobody")),
    ("conversations.history", lambda m: m.conversations.history("c1")),
    ("long_term.get", lambda m: m.long_term("alice").get("nope")),
    ("long_term.entries", lambda m: m.long_term("alice").entries()),
    ("long_term.search", lambda m: m.long_term("alice").search("violin", tags=["music"])),
    ("long_term.search empty scope", lambda m: m.long_term("nobody").search("violin")),
    ("long_term.search odd scope", lambda m: m.long_term("..").search("violin")),
    ("long_term.list_categories", lambda m: m.long_term("nobody").list_categories()),
    ("long_term.list_tags", lambda m: m.long_term("alice").list_tags()),
    (
        "long_term.history",
        lambda m: [m.long_term("alice").history(e.id) for e in m.long_term("alice").entries()],
    ),
    ("long_term.history missing", lambda m: m.long_term("alice").history("nope")),
    ("long_term.search history", lambda m: m.long_term("alice").search("lives", include_history=True)),
    ("long_term.search expired", lambda m: m.long_term("alice").search("lives", include_expired=True)),
    ("long_term.search as_of", lambda m: m.long_term("alice").search(None, as_of=0)),
    ("long_term.current_count", lambda m: m.long_term("alice").current_count()),
    ("dream.extract dry run", lambda m: _extract_dry_run(m)),
    ("working.get", lambda m: m.working("session/s1").get("draft")),
    ("working.get missing", lambda m: m.working("session/zz").get("draft")),
    ("working.list", lambda m: m.working("session/s1").list()),
    ("working.search", lambda m: m.working("session/s1").search("bob")),
    ("shared.keys", lambda m: m.shared("team").keys()),
    ("shared.get", lambda m: m.shared("team").get("plan")),
    ("shared.get missing board", lambda m: m.shared("nobody").get("plan")),
    ("shared.to_dict", lambda m: m.shared("team").to_dict()),
    ("turns.turns", lambda m: m.turns.turns("s1")),
    ("turns.recent", lambda m: m.turns.recent("s1")),
    ("turns.sessions", lambda m: m.turns.sessions()),
    ("turns.log_entries", lambda m: m.turns.log_entries()),
    ("dream.history", lambda m: m.dream("alice").history()),
    ("dream.history empty", lambda m: m.dream("nobody").history()),
    ("dream.show missing", lambda m: m.dream("alice").show("dnope")),
    ("shared.get with wait", lambda m: m.shared("team").get("plan", wait=0.01)),
    ("long_term.stale_vectors", lambda m: m.long_term("alice").stale_vectors()),
    ("conversations.history_text", lambda m: m.conversations.history_text("c1")),
    ("tracker.was_injected", lambda m: InjectionTracker(m.engine).was_injected("s1", "x")),
    ("context dry run", lambda m: ContextBuilder(m, scope="alice").build("s1", "violin?", dry_run=True)),
    ("long_term scopes", lambda m: list_scopes(m.engine)),
    ("working namespaces", lambda m: list_namespaces(m.engine)),
    ("shared boards", lambda m: list_boards(m.engine)),
]


def _extract_dry_run(mem: Memory) -> Any:
    from memstack.llm.scripted import ScriptedChatModel

    facts = '{"facts": [{"content": "Alice plays the cello", "sourceIds": []}]}'
    model = ScriptedChatModel([facts, '{"decisions": []}'])
    return mem.dream("alice", model=model, turns=mem.turns).extract(dry_run=True)


@pytest.mark.parametrize(("name", "read"), READS, ids=[name for name, _ in READS])
def test_a_read_leaves_the_keyspace_unchanged(mem: Memory, name: str, read: Callable[[Memory], Any]) -> None:
    seed(mem)
    before = keyspace(mem)
    with contextlib.suppress(MemstackError):  # a typed refusal is a read too; it must not write either
        read(mem)
    assert keyspace(mem) == before, name


def test_the_snapshot_sees_a_write(mem: Memory) -> None:
    seed(mem)
    before = keyspace(mem)
    mem.long_term("bob").save(content="x")
    assert keyspace(mem) != before


def test_listings_skip_expired_things_without_removing_them(mem: Memory, clock: ManualClock) -> None:
    sessions = SessionStore(mem.engine, session_ttl_hours=0.5)
    sessions.create("old")
    turns = mem.turns
    short = TurnMemory(mem.engine, idle_timeout=60)
    short.add("old-turns", "user", "hi")
    mem.working("session/old").set("draft", 1, ttl=10)
    clock.advance(3600)
    before = keyspace(mem)
    assert sessions.list() == []
    assert "old-turns" not in short.sessions() and "old-turns" not in turns.sessions()
    assert mem.working("session/old").list("") == []
    assert keyspace(mem) == before
    assert sessions.prune() == 1 and short.prune() == 1  # the writes that clean up
    assert keyspace(mem) != before
