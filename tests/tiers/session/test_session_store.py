"""``SessionStore`` on every engine: the spec's items 7-34 as DESIGN §6 adjusts them."""

from __future__ import annotations

import json

import pytest

from memstack import Memory
from memstack.foundation.errors import (
    EntryNotFound,
    InvalidConfiguration,
    InvalidKey,
    InvalidSessionId,
    InvalidValue,
    NotANumber,
    SessionExists,
    SessionNotFound,
)
from memstack.tiers.session import SessionStore
from memstack.tiers.session.layout import SESSIONS_KEY


def test_create_resume_list_delete(mem: Memory) -> None:
    s = mem.sessions
    assert s.list() == []
    s.create("b")
    s.create("a")
    assert s.list() == ["a", "b"]
    assert s.resume("a") == 0
    s.put("a", "x", 1)
    s.put("a", "w", 2)
    assert s.resume("a") == 2
    assert s.delete("a") == ["w", "x"]
    assert s.list() == ["b"]
    with pytest.raises(SessionNotFound, match=r"^Session 'a' not found$"):
        s.resume("a")
    with pytest.raises(SessionNotFound):
        s.delete("a")


def test_create_duplicate(mem: Memory) -> None:
    mem.sessions.create("s")
    with pytest.raises(SessionExists, match=r"^Session 's' already exists$"):
        mem.sessions.create("s")


def test_delete_then_recreate_is_empty(mem: Memory) -> None:
    s = mem.sessions
    s.create("s")
    s.put("s", "k", "v")
    s.delete("s")
    s.create("s")
    assert s.keys("s") == []
    assert s.history("s") == []


def test_put_get_roundtrip_and_copies(mem: Memory) -> None:
    s = mem.sessions
    s.create("s")
    value = {"a": [1, 2.5, None, True, "é"], "b": {"c": "123"}}
    s.put("s", "k", value)
    value["a"].append("mutated")
    got = s.get("s", "k")
    assert got == {"a": [1, 2.5, None, True, "é"], "b": {"c": "123"}}
    got["b"]["c"] = "changed"
    assert s.get("s", "k")["b"]["c"] == "123"
    s.put("s", "n", "123")
    assert s.get("s", "n") == "123"
    s.put("s", "n", 7)  # overwrite allowed
    assert s.get("s", "n") == 7


def test_get_missing_key(mem: Memory) -> None:
    s = mem.sessions
    s.create("s")
    with pytest.raises(EntryNotFound, match="'nope'"):
        s.get("s", "nope")
    assert s.get("s", "nope", None) is None
    assert s.get("s", "nope", default=5) == 5


def test_operations_on_unknown_session(mem: Memory) -> None:
    s = mem.sessions
    for call in (
        lambda: s.put("zz", "k", 1),
        lambda: s.get("zz", "k"),
        lambda: s.keys("zz"),
        lambda: s.clear("zz"),
        lambda: s.clear("zz", "k"),
        lambda: s.increment("zz", "k"),
        lambda: s.history("zz"),
        lambda: s.summarize_if_needed("zz"),
        lambda: s.replace_history("zz", []),
    ):
        with pytest.raises(SessionNotFound, match=r"^Session 'zz' not found$"):
            call()
    assert mem.engine.scan("rr:memory:") is not None
    assert [k for k in mem.engine.scan("rr:memory:") if k != SESSIONS_KEY] == []  # nothing orphaned


def test_keys_sorted_and_clear(mem: Memory) -> None:
    s = mem.sessions
    s.create("s")
    for key in ("c", "a", "b.1"):
        s.put("s", key, key)
    assert s.keys("s") == ["a", "b.1", "c"]
    assert s.clear("s", "a") == ["a"]
    assert s.clear("s", "a") == []
    assert s.keys("s") == ["b.1", "c"]
    assert s.clear("s") == ["b.1", "c"]
    assert s.clear("s") == []
    assert s.keys("s") == []
    with pytest.raises(InvalidKey):
        s.clear("s", "")
    clears = [e for e in s.history("s", 0) if e["op"] == "clear"]
    assert [(e["key"], e["cleared"]) for e in clears] == [
        ("a", ["a"]),
        ("a", []),
        (None, ["b.1", "c"]),
        (None, []),
    ]


def test_increment(mem: Memory) -> None:
    s = mem.sessions
    s.create("s")
    assert s.increment("s", "n") == 1
    assert s.increment("s", "n", 5) == 6
    assert s.increment("s", "n", -2) == 4
    assert s.get("s", "n") == 4
    assert isinstance(s.get("s", "n"), int)
    assert s.increment("s", "f", 0.5) == 0.5
    assert s.increment("s", "f", 1) == 1.5
    assert s.get("s", "f") == 1.5
    assert s.keys("s") == ["f", "n"]
    ops = [(e["op"], e["key"]) for e in s.history("s", 0)]
    assert ops == [("increment", "n")] * 3 + [("increment", "f")] * 2


def test_increment_non_number_changes_nothing(mem: Memory) -> None:
    s = mem.sessions
    s.create("s")
    for value in ("5", [1], {"a": 1}, True, None):
        s.put("s", "v", value)
        before = s.history("s", 0)
        with pytest.raises(NotANumber):
            s.increment("s", "v")
        assert s.get("s", "v") == value
        assert s.history("s", 0) == before
    with pytest.raises(InvalidValue):
        s.increment("s", "n", "1")  # type: ignore[arg-type]  # the amount rule is what is tested
    assert "n" not in s.keys("s")


def test_history_limit_and_order(mem: Memory, clock: object) -> None:
    s = mem.sessions
    s.create("s")
    for i in range(5):
        s.put("s", f"k{i}", i)
    entries = s.history("s")
    assert [e["key"] for e in entries] == [f"k{i}" for i in range(5)]
    assert all(e["op"] == "put" and isinstance(e["timestamp"], float) for e in entries)
    assert set(entries[0]) == {"op", "key", "timestamp"}  # history records operations, not values
    assert [e["key"] for e in s.history("s", 2)] == ["k3", "k4"]
    assert len(s.history("s", 0)) == 5
    assert len(s.history("s", -1)) == 5


def test_invalid_ids_and_keys_raise_before_any_write(mem: Memory) -> None:
    s = mem.sessions
    s.create("s")
    with pytest.raises(InvalidSessionId):
        s.create("abc\n")
    with pytest.raises(InvalidSessionId):
        s.put("bad id", "k", 1)
    for key in ("__keys__", "__history__", "__meta__", "a:b", "k\n"):
        with pytest.raises(InvalidKey):
            s.put("s", key, 1)
    with pytest.raises(InvalidValue):
        s.put("s", "k", {1, 2})
    with pytest.raises(InvalidValue):
        s.put("s", "k", float("nan"))
    assert s.keys("s") == []
    assert s.history("s") == []


def test_value_size_limit(mem: Memory) -> None:
    small = SessionStore(mem.engine, max_value_bytes=100)
    small.create("s")
    small.put("s", "ok", "x" * 98)
    with pytest.raises(InvalidValue, match="100 bytes"):
        small.put("s", "big", "x" * 99)
    assert small.keys("s") == ["ok"]


def test_auto_summarise_keeps_newest_half(mem: Memory) -> None:
    s = SessionStore(mem.engine, max_history=10)
    s.create("s")
    for i in range(11):
        s.put("s", f"key{i}", i)
    history = s.history("s", 0)
    assert len(history) == 6
    assert history[0]["op"] == "summary"
    assert history[0]["summarized_count"] == 6
    assert history[0]["keys_touched"] == [f"key{i}" for i in range(6)]
    assert [e["key"] for e in history[1:]] == [f"key{i}" for i in range(6, 11)]
    s.clear("s")  # clear never summarises
    assert len(s.history("s", 0)) == 7


def test_summaries_are_cumulative(mem: Memory) -> None:
    s = SessionStore(mem.engine, max_history=5)
    s.create("s")
    for i in range(10):
        s.put("s", f"key{i}", i)
    history = s.history("s", 0)
    assert history[0]["summarized_count"] == 7
    assert history[0]["op_counts"] == {"put": 7}
    assert [e["key"] for e in history[1:]] == ["key7", "key8", "key9"]


def test_no_auto_summarise(mem: Memory) -> None:
    s = SessionStore(mem.engine, max_history=3, auto_summarize=False)
    s.create("s")
    for _ in range(6):
        s.increment("s", "n")
    assert len(s.history("s", 0)) == 6
    assert s.summarize_if_needed("s") is True
    assert s.summarize_if_needed("s") is False
    assert [e["op"] for e in s.history("s", 0)] == ["summary", "increment"]
    assert s.summarize_if_needed("s", 100) is False


def test_replace_history(mem: Memory) -> None:
    s = mem.sessions
    s.create("s")
    s.put("s", "k", 1)
    s.replace_history("s", [{"op": "note", "key": "x"}])
    assert s.history("s") == [{"op": "note", "key": "x"}]
    s.replace_history("s", [])
    assert s.history("s") == []
    with pytest.raises(InvalidValue):
        s.replace_history("s", ["not a dict"])  # type: ignore[list-item]  # the rule under test


def test_seed_layout(mem: Memory) -> None:
    s = mem.sessions
    e = mem.engine
    s.create("s1")
    s.put("s1", "name", {"a": 1})
    s.increment("s1", "count", 3)
    tag = e.tag("s1")
    assert json.loads(e.get(f"rr:memory:{tag}:name") or "") == {"a": 1}
    assert e.get(f"rr:memory:{tag}:count") == "3"
    assert e.smembers(f"rr:memory:{tag}:__keys__") == {"name", "count"}
    assert [json.loads(x)["op"] for x in e.lrange(f"rr:memory:{tag}:__history__", 0, -1)] == [
        "put",
        "increment",
    ]
    meta = e.hgetall(f"rr:memory:{tag}:__meta__")
    assert meta["ttl_seconds"] == "None"
    assert float(meta["created_at"]) == pytest.approx(e.clock.now())
    assert e.smembers("rr:memory:__sessions__") == {"s1"}
    assert tag == ("{s1}" if e.clustered else "s1")


def test_stale_registered_id_is_dropped_and_recreatable(mem: Memory) -> None:
    e = mem.engine
    e.sadd(SESSIONS_KEY, "ghost")  # as if a create crashed after registering
    assert mem.sessions.list() == []
    assert e.smembers(SESSIONS_KEY) == {"ghost"}  # a listing is a read: it never writes
    assert mem.sessions.prune() == 1
    assert e.smembers(SESSIONS_KEY) == set()
    mem.sessions.create("ghost")
    assert mem.sessions.list() == ["ghost"]


def test_leftovers_without_meta_are_cleaned_on_create(mem: Memory) -> None:
    e = mem.engine
    tag = e.tag("s")
    e.sadd(f"rr:memory:{tag}:__keys__", "old")  # a delete() that died after dropping the meta
    e.set(f"rr:memory:{tag}:old", "1")
    e.rpush(f"rr:memory:{tag}:__history__", "{}")
    mem.sessions.create("s")
    assert mem.sessions.keys("s") == []
    assert mem.sessions.history("s") == []
    assert e.get(f"rr:memory:{tag}:old") is None


def test_bad_settings(mem: Memory) -> None:
    with pytest.raises(InvalidConfiguration):
        SessionStore(mem.engine, max_history=0)
    with pytest.raises(InvalidConfiguration):
        SessionStore(mem.engine, session_ttl_hours=-1)
    with pytest.raises(InvalidConfiguration):
        SessionStore(mem.engine, max_sessions=-1)
    with pytest.raises(InvalidValue):
        mem.sessions.create("s", ttl_hours=float("inf"))
