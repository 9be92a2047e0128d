"""Networks share one memory; agents alone have their own; snapshots (spec items 31-33)."""

from __future__ import annotations

import json

import pytest

from memstack import Memory
from memstack.engines import Engine
from memstack.foundation.errors import InvalidKey, InvalidValue
from memstack.tiers.shared import Network, SharedMemory

from .conftest import Collector


def test_agents_in_a_network_share_its_memory(engine: Engine, collector: Collector) -> None:
    with Network(engine, "pipeline") as network:
        network.memory["project"] = "quarterly_report"
        analyzer, writer = network.agent("analyzer"), network.agent("writer")
        assert analyzer["project"] == "quarterly_report"
        writer.subscribe("analysis_result", collector)
        analyzer["analysis_result"] = {"ok": True}
        [change] = collector.wait_for(1)
        assert (change.writer, change.network_name) == ("analyzer", "pipeline")
        assert network.memory.network_name == "pipeline"
        network.reset_memory()
        assert network.memory.keys() == []
        assert writer.keys() == []


def test_agent_outside_network_has_own_memory(engine: Engine) -> None:
    with Network(engine, "pipeline") as network:
        network.memory["k"] = "shared"
        alone = Network.agent_memory(engine, "analyzer", enable_cache=False)
        assert alone["k"] is None
        alone["k"] = "own"
        assert network.memory["k"] == "shared"
        assert Network.agent_memory(engine, "analyzer", enable_cache=False)["k"] == "own"


def test_network_from_memory_facade(engine: Engine) -> None:
    memory = Memory(engine)
    network = Network(memory, "n1")
    assert network.engine is engine
    shared = memory.shared("n1x", enable_cache=False)
    shared["a"] = 1
    assert memory.shared("n1x", enable_cache=False)["a"] == 1
    network.close()
    memory.close()  # closes the shared memories it opened, then the engine


def test_bad_network_name(engine: Engine) -> None:
    with pytest.raises(InvalidKey, match="network name"):
        Network(engine, "has space")


def test_to_dict_and_json(shared: SharedMemory) -> None:
    assert shared.to_dict() == {"data": {}, "results": [], "messages": [], "custom": {}}
    shared.merge({"k": "123", "n": None, "session_id": "s1", "results": [{"output": ["x"]}]})
    shared.data.x = 1
    shared.append_message({"role": "user", "content": "hi"})
    snapshot = shared.to_dict()
    assert snapshot == {
        "data": {"x": 1},
        "results": [{"output": ["x"]}],
        "messages": [{"role": "user", "content": "hi"}],
        "session_id": "s1",
        "custom": {"k": "123", "n": None},
    }
    assert json.loads(shared.to_json()) == snapshot


def test_from_dict_replaces_content(engine: Engine, shared: SharedMemory) -> None:
    shared.merge({"old": 1, "session_id": "old"})
    snapshot = {"data": {"x": 1}, "results": [1], "messages": [], "custom": {"k": [1, "2"]}}
    restored = SharedMemory.from_dict(engine, "t", snapshot, enable_cache=False)
    assert restored.to_dict() == snapshot
    assert shared.keys() == ["k"]
    assert shared.session_id is None
    restored.close()


def test_from_dict_validates_before_writing(engine: Engine, shared: SharedMemory) -> None:
    shared["keep"] = 1
    with pytest.raises(InvalidValue, match="reserved names"):
        SharedMemory.from_dict(engine, "t", {"custom": {"data": 1}})
    with pytest.raises(InvalidValue):
        SharedMemory.from_dict(engine, "t", {"custom": {"k": (1,)}})
    with pytest.raises(InvalidValue):
        SharedMemory.from_dict(engine, "t", {"messages": [1]})
    assert shared["keep"] == 1


def test_clone_copies_quietly(engine: Engine, shared: SharedMemory, collector: Collector) -> None:
    shared.merge({"k": {"deep": [1]}, "session_id": "s", "data": {"x": 1}})
    target = SharedMemory(engine, "copy", enable_cache=False)
    target.subscribe_pattern("*", collector)
    target["stale"] = 1
    copy = shared.clone("copy")
    copy["after"] = 2  # a notifying write after the copy: the only change the subscriber sees
    assert [c.key for c in collector.wait_for(2)] == ["stale", "after"]
    assert copy.to_dict() == {
        "data": {"x": 1},
        "results": [],
        "messages": [],
        "session_id": "s",
        "custom": {"k": {"deep": [1]}, "after": 2},
    }
    assert not copy.subscribed("k")
    shared["k"] = "changed"
    assert copy["k"] == {"deep": [1]}
    copy.close()
    target.close()
