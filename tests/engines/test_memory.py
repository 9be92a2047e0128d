"""What only the in-process engine has: its sweeper, its privacy, its isolation of values."""

from __future__ import annotations

import threading

from memstack import ManualClock
from memstack.engines import open_engine
from memstack.engines.memory import MemoryEngine

from .test_conformance import wait_for


def test_sweep_removes_expired_keys_in_bounded_steps() -> None:
    clock = ManualClock()
    with MemoryEngine(clock=clock, sweep_interval=None, sweep_limit=10) as engine:
        for i in range(22):
            engine.set(f"k{i}", "v", px=1000)
        engine.set("keep", "v")
        engine.rpush("later", "x")
        engine.pexpire("later", 5000)
        assert engine.sweep() == 0
        clock.advance(1.0)
        assert [engine.sweep() for _ in range(4)] == [10, 10, 2, 0]
        assert sorted(engine.scan("")) == ["keep", "later"]


def test_sweep_skips_keys_whose_ttl_moved() -> None:
    clock = ManualClock()
    with MemoryEngine(clock=clock, sweep_interval=None) as engine:
        engine.set("k", "v", px=100)
        engine.pexpire("k", 10_000)
        engine.set("plain", "v", px=100)
        engine.set("plain", "w")  # a plain set clears the TTL
        clock.advance(1.0)
        assert engine.sweep() == 0
        assert engine.get("k") == "v" and engine.get("plain") == "w"


def test_background_sweep_and_clean_close() -> None:
    clock = ManualClock()
    engine = MemoryEngine(clock=clock, sweep_interval=0.01)
    engine.set("gone", "v", px=10)
    clock.advance(0.01)
    assert wait_for(lambda: engine.sweep() == 0 and not engine._data)
    engine.close()
    engine.close()
    assert not [t for t in threading.enumerate() if t.name == "memstack-memory-sweep"]


def test_each_memory_url_is_a_private_store() -> None:
    with open_engine("memory://") as first, open_engine("memory://") as second:
        first.set("k", "v")
        assert second.get("k") is None


def test_returned_containers_are_copies() -> None:
    with MemoryEngine(sweep_interval=None) as engine:
        engine.hset("h", {"f": "v"})
        engine.sadd("s", "m")
        engine.rpush("l", "x")
        engine.hgetall("h")["f"] = "changed"
        engine.smembers("s").add("intruder")
        engine.lrange("l", 0, -1).append("intruder")
        engine.hkeys("h").append("intruder")
        assert engine.hgetall("h") == {"f": "v"}
        assert engine.smembers("s") == {"m"}
        assert engine.lrange("l", 0, -1) == ["x"]
        assert engine.hkeys("h") == ["f"]
