"""TurnMemory on every engine: retention, recent window, sessions, idle expiry, the turn log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _forked import held_by_a_thread, in_child
from memstack import Memory
from memstack.engines import Engine
from memstack.foundation.clock import ManualClock
from memstack.foundation.errors import InvalidConfiguration, InvalidSessionId, InvalidValue
from memstack.tiers.conversation import TurnMemory


def test_turns_are_chronological_and_retained_up_to_the_limit(engine: Engine) -> None:
    turns = TurnMemory(engine, max_turns_per_session=5, context_turns=2)
    for i in range(7):
        turns.add("s1", "user" if i % 2 == 0 else "assistant", f"t{i}")
    assert [t.content for t in turns.turns("s1")] == ["t2", "t3", "t4", "t5", "t6"]
    assert [t.content for t in turns.recent("s1")] == ["t5", "t6"]
    assert [t.content for t in turns.recent("s1", 3)] == ["t4", "t5", "t6"]
    assert turns.turns("unknown") == []


def test_defaults_are_50_retained_and_20_recent(mem: Memory) -> None:
    for i in range(60):
        mem.turns.add("s1", "user", f"t{i}")
    assert len(mem.turns.turns("s1")) == 50
    assert [t.content for t in mem.turns.recent("s1")] == [f"t{i}" for i in range(40, 60)]


def test_every_turn_is_logged_in_order_across_sessions(engine: Engine, clock: ManualClock) -> None:
    turns = TurnMemory(engine, max_turns_per_session=2)
    turns.add("a", "user", "hello")
    clock.advance(1)
    turns.add("b/sub", "assistant", "hi 🤖")
    turns.add("a", "user", "x")
    turns.add("a", "user", "y")  # evicted from the session, still in the log
    entries = turns.log_entries()
    assert [(e["session_id"], e["content"]) for e in entries] == [
        ("a", "hello"), ("b/sub", "hi 🤖"), ("a", "x"), ("a", "y"),
    ]  # fmt: skip
    assert entries[1]["role"] == "assistant"
    assert entries[1]["timestamp"] == entries[0]["timestamp"] + 1
    assert turns.log_entries(limit=1) == entries[-1:]
    assert turns.clear_log() == 4
    assert turns.log_entries() == []


def test_log_can_be_disabled_and_mirrored_to_jsonl(engine: Engine, tmp_path: Path) -> None:
    TurnMemory(engine, log=False).add("s", "user", "unlogged")
    path = tmp_path / "turns.jsonl"
    mirrored = TurnMemory(engine, log_path=path)
    mirrored.add("s", "user", "one")
    mirrored.add("s", "assistant", "two")
    assert [e["content"] for e in mirrored.log_entries()] == ["one", "two"]
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines == mirrored.log_entries()


def test_sessions_clear_and_idle_expiry(engine: Engine, clock: ManualClock) -> None:
    turns = TurnMemory(engine, idle_timeout=3600)
    turns.add("a", "user", "1")
    turns.add("b", "user", "2")
    assert turns.sessions() == ["a", "b"]
    assert turns.clear("a") is True
    assert turns.clear("a") is False
    assert turns.sessions() == ["b"]
    clock.advance(3000)
    turns.turns("b")  # a read is an access
    clock.advance(3000)
    assert turns.sessions() == ["b"]
    clock.advance(3601)
    assert turns.sessions() == []
    assert turns.turns("b") == []
    assert len(turns.log_entries()) == 2


def test_turn_dicts_and_errors(engine: Engine) -> None:
    turns = TurnMemory(engine)
    turn = turns.add("s", "user", "hi")
    assert turn.to_dict()["timestamp"].endswith("Z")
    with pytest.raises(InvalidSessionId, match="'bad id'"):
        turns.add("bad id", "user", "x")
    with pytest.raises(InvalidValue, match="role"):
        turns.add("s", "", "x")
    with pytest.raises(InvalidValue, match="content"):
        turns.add("s", "user", None)  # type: ignore[arg-type]
    with pytest.raises(InvalidValue, match="n 0"):
        turns.recent("s", 0)
    with pytest.raises(InvalidConfiguration, match="max_turns_per_session"):
        TurnMemory(engine, max_turns_per_session=0)
    assert [t.content for t in turns.turns("s")] == ["hi"]


def test_a_child_forked_while_a_parent_thread_appended_to_the_file_appends_too(
    engine: Engine, tmp_path: Path
) -> None:
    path = tmp_path / "turns.jsonl"
    mirrored = TurnMemory(engine, log_path=path)
    mirrored.add("s", "user", "from the parent")

    def child() -> bool:
        mirrored.add("s", "user", "from the child")
        return "from the child" in path.read_text(encoding="utf-8")

    with held_by_a_thread(mirrored._file_lock):
        assert in_child(child, deadline=60)  # stuck on the parent's lock: killed, False
