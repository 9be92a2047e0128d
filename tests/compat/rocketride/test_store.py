"""The seed's facade: result dictionaries, constructor, auto-summarisation (spec items 5-26)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memstack import ManualClock
from memstack.compat.rocketride.store import PersistentMemoryStore, engine_url
from memstack.engines import Engine
from memstack.foundation.errors import InvalidConfiguration, InvalidKey, InvalidSessionId, NotANumber


@pytest.fixture
def store(engine: Engine, engine_url_for: str, clock: ManualClock) -> Iterator[PersistentMemoryStore]:
    backend = "redis" if engine.name.startswith("redis") else engine.name
    memory_store = PersistentMemoryStore(backend, url=engine_url_for, max_history=5, clock=clock)
    yield memory_store
    memory_store.close()


def test_result_dicts(store: PersistentMemoryStore) -> None:
    assert store.create_session("s") == {"ok": True, "session_id": "s"}
    assert store.create_session("s") == {"ok": False, "error": "Session 's' already exists"}
    assert store.put("s", "k", {"a": 1}) == {"ok": True, "session_id": "s", "key": "k"}
    assert store.get("s", "k") == {"ok": True, "session_id": "s", "key": "k", "value": {"a": 1}}
    assert store.get("s", "nope") == {"ok": False, "session_id": "s", "key": "nope", "value": None}
    assert store.increment("s", "n", 2) == {"ok": True, "session_id": "s", "key": "n", "value": 2}
    assert store.list_keys("s") == {"ok": True, "session_id": "s", "keys": ["k", "n"]}
    assert store.resume_session("s") == {"ok": True, "session_id": "s", "key_count": 2}
    assert store.clear("s", "k") == {"ok": True, "session_id": "s", "cleared": ["k"]}
    entries = store.get_history("s", 0)["entries"]
    assert [e["op"] for e in entries] == ["put", "increment", "clear"]
    assert entries[-1]["cleared"] == ["k"]
    assert store.list_sessions() == ["s"]
    assert store.delete_session("s") == {"ok": True, "session_id": "s", "keys_cleared": ["n"]}
    missing = {"ok": False, "error": "Session 's' not found"}
    assert store.resume_session("s") == missing
    assert store.put("s", "k", 1) == missing
    assert store.get("s", "k") == missing
    assert store.list_keys("s") == missing
    assert store.clear("s") == missing
    assert store.increment("s", "k") == missing
    assert store.get_history("s") == missing
    assert store.delete_session("s") == missing
    assert store.replace_history("s", [{"op": "x"}]) is None
    assert store.summarize_if_needed("s", 1) is False


def test_malformed_input_raises_value_errors(store: PersistentMemoryStore) -> None:
    with pytest.raises(InvalidSessionId):
        store.create_session("abc\n")
    store.create_session("s")
    with pytest.raises(InvalidKey):
        store.put("s", "a b", 1)
    with pytest.raises(ValueError, match="Invalid key"):
        store.clear("s", "")
    store.put("s", "txt", "x")
    with pytest.raises(NotANumber):
        store.increment("s", "txt")
    with pytest.raises(TypeError):
        store.increment("s", "txt")


def test_auto_summarise_after_put_and_increment(store: PersistentMemoryStore) -> None:
    store.create_session("s")
    for i in range(10):
        store.put("s", f"key{i}", i)
    entries = store.get_history("s", 0)["entries"]
    assert len(entries) == 4
    assert entries[0]["summarized_count"] == 7
    store.replace_history("s", [])
    for _ in range(6):
        store.increment("s", "n")
    assert store.get_history("s", 0)["entries"][0]["op"] == "summary"


def test_store_wide_ttl(engine: Engine, engine_url_for: str, clock: ManualClock) -> None:
    backend = "redis" if engine.name.startswith("redis") else engine.name
    store = PersistentMemoryStore(backend, url=engine_url_for, session_ttl_hours=0.0001, clock=clock)
    try:
        assert store.ttl_seconds == pytest.approx(0.36)
        store.create_session("t")
        clock.advance(0.5)
        assert store.resume_session("t") == {"ok": False, "error": "Session 't' not found"}
    finally:
        store.close()


def test_memory_cap_result(clock: ManualClock) -> None:
    store = PersistentMemoryStore(clock=clock)
    try:
        store.sessions.max_sessions = 2
        store.create_session("a")
        store.create_session("b")
        assert store.create_session("c") == {"ok": False, "error": "Maximum sessions (2) reached"}
    finally:
        store.close()


def test_constructor_defaults_and_backends(clock: ManualClock) -> None:
    store = PersistentMemoryStore(clock=clock)
    assert store.max_history == 100
    assert store.auto_summarize is True
    assert store.ttl_seconds is None
    assert store.backend.name == "memory"
    store.close()
    store.close()  # idempotent, never raises
    with pytest.raises(InvalidConfiguration, match=r"^Unknown backend: 'mongodb'"):
        PersistentMemoryStore("mongodb")
    with pytest.raises(ValueError, match=r"^Unknown backend"):
        PersistentMemoryStore("mongodb")


def test_engine_url_choices() -> None:
    assert engine_url("memory") == "memory://"
    assert engine_url("redis") == "redis://localhost:6379/0"
    assert engine_url("redis", redis_host="h", redis_port=1, redis_password="p@ss") == "redis://:p%40ss@h:1/0"
    assert engine_url("sqlite", url="sqlite:///x.db") == "sqlite:///x.db"
    assert engine_url("sqlite").startswith("sqlite:///")
    with pytest.raises(InvalidConfiguration, match="redis_host is empty"):
        engine_url("redis", redis_host="")
    assert engine_url("postgres", url="postgresql://h/db") == "postgresql://h/db"
    with pytest.raises(InvalidConfiguration, match="no default server"):
        engine_url("postgres")
