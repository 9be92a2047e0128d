"""The key-value surface of SharedMemory on every engine (spec section 4 items 1-11, 23-31)."""

from __future__ import annotations

import threading

import pytest

from memstack.engines import Engine
from memstack.foundation.errors import Conflict, InvalidInput, InvalidKey, InvalidValue
from memstack.tiers.shared import SharedMemory


def test_mapping_protocol(shared: SharedMemory) -> None:
    shared["k"] = "v"
    assert shared["k"] == "v"
    assert "k" in shared
    assert "missing" not in shared
    assert "bad\nkey" not in shared
    assert 3 not in shared
    assert shared["missing"] is None
    del shared["k"]
    assert "k" not in shared


def test_values_round_trip_exactly(shared: SharedMemory) -> None:
    values = {"s": "123", "t": "true", "n": 123, "f": 1.5, "none": None, "nested": {"a": [1, {"b": "2"}]}}
    for key, value in values.items():
        shared.set(key, value)
    for key, value in values.items():
        got = shared.get(key)
        assert got == value
        assert type(got) is type(value)


def test_values_are_never_the_same_mutable_object(shared: SharedMemory) -> None:
    value = {"a": [1]}
    shared["k"] = value
    value["a"].append(2)
    first = shared["k"]
    first["a"].append(3)
    assert shared["k"] == {"a": [1]}


def test_non_json_refused_before_writing(shared: SharedMemory) -> None:
    shared["k"] = 1
    with pytest.raises(InvalidValue):
        shared["k"] = {"x": (1, 2)}
    assert shared["k"] == 1
    assert shared.version("k") == 1


def test_second_instance_sees_same_data(engine: Engine, shared: SharedMemory) -> None:
    shared["k"] = [1, 2]
    other = SharedMemory(engine, "t", enable_cache=False)
    assert other["k"] == [1, 2]
    assert SharedMemory(engine, "other", enable_cache=False)["k"] is None
    other.close()


def test_keys_and_all_keys(shared: SharedMemory) -> None:
    shared["b"] = 1
    shared["a"] = 2
    shared.data["x"] = 1
    assert sorted(shared.keys()) == ["a", "b"]
    assert shared.all_keys()[:5] == ["data", "results", "messages", "session_id", "cache"]
    assert sorted(shared.all_keys()[5:]) == ["a", "b"]
    assert len(shared) == 2
    assert sorted(shared) == ["a", "b"]


def test_reserved_keys_always_present(shared: SharedMemory) -> None:
    for key in ("data", "results", "messages", "session_id", "cache"):
        assert key in shared


def test_delete_returns_old_value(shared: SharedMemory) -> None:
    shared["k"] = {"a": 1}
    assert shared.delete("k") == {"a": 1}
    assert shared.delete("k") is None
    assert shared.keys() == []


@pytest.mark.parametrize("key", ["data", "results", "messages", "session_id", "cache"])
def test_delete_reserved_refused(shared: SharedMemory, key: str) -> None:
    with pytest.raises(InvalidKey, match=f"^Cannot delete reserved key: {key}$"):
        shared.delete(key)


def test_cache_cannot_be_reassigned(engine: Engine, shared: SharedMemory) -> None:
    for value in (None, 1, "x"):
        with pytest.raises(InvalidInput, match=r"^Cannot reassign cache - it is initialized automatically$"):
            shared["cache"] = value
    with pytest.raises(InvalidInput, match="Cannot reassign cache"):
        shared.cache = None  # type: ignore[misc]  # the point of the test
    assert shared["cache"] is None  # enable_cache=False


def test_merge_is_atomic_and_validated_first(shared: SharedMemory) -> None:
    shared.merge({"a": 1, "session_id": "s1", "data": {"x": 1}})
    assert shared["a"] == 1
    assert shared.session_id == "s1"
    assert shared.data.x == 1
    with pytest.raises(InvalidInput, match="Cannot reassign cache"):
        shared.merge({"b": 2, "cache": None})
    with pytest.raises(InvalidValue):
        shared.merge({"c": 3, "d": {1, 2}})
    assert "b" not in shared
    assert "c" not in shared


def test_clear_keeps_reserved(shared: SharedMemory) -> None:
    shared["a"] = 1
    shared.session_id = "s"
    shared.data["x"] = 1
    assert shared.clear() is shared
    assert shared.keys() == []
    assert shared.session_id == "s"
    assert shared.data.to_dict() == {"x": 1}


def test_reset_restores_initial_values(shared: SharedMemory) -> None:
    shared["a"] = 1
    shared.merge({"session_id": "s", "data": {"x": 1}, "results": [1], "messages": [{"role": "user"}]})
    shared.reset()
    assert shared.keys() == []
    assert (shared.data.to_dict(), shared.results, shared.messages, shared.session_id) == ({}, [], [], None)


def test_reserved_reads_and_writes(shared: SharedMemory) -> None:
    assert shared["results"] == []
    assert shared["messages"] == []
    assert shared["session_id"] is None
    shared["results"] = None
    assert shared.results == []
    shared["results"] = "one"
    assert shared.results == ["one"]
    shared.append_result({"output": ["a"], "tool_calls": ["t"]})
    assert shared.results_from(1) == [{"output": ["a"], "tool_calls": ["t"]}]
    assert shared.results_from(5) == []
    shared["messages"] = [{"role": "user", "content": "hi"}]
    shared.append_message({"role": "assistant", "content": "yo"})
    assert [m["role"] for m in shared.messages] == ["user", "assistant"]
    with pytest.raises(InvalidValue, match="Invalid message"):
        shared["messages"] = ["not a dict"]
    with pytest.raises(InvalidValue, match="session_id"):
        shared["session_id"] = 5
    copy = shared.results
    copy.append("x")
    assert "x" not in shared.results


def test_objects_with_to_dict_are_stored_as_dicts(shared: SharedMemory) -> None:
    class Msg:
        def to_dict(self) -> dict[str, str]:
            return {"role": "user", "content": "hi"}

    shared.append_message(Msg())
    shared.append_result(Msg())
    assert shared.messages == [{"role": "user", "content": "hi"}]
    assert shared.results == [{"role": "user", "content": "hi"}]


def test_format_history(shared: SharedMemory) -> None:
    shared["messages"] = [{"role": "user", "content": "q"}]
    shared["results"] = [{"output": ["o1"], "tool_calls": ["t1"]}, {"output": ["o2"]}]
    assert shared.format_history() == [{"role": "user", "content": "q"}, "o1", "t1", "o2"]
    assert shared.format_history(lambda r: [len(r)]) == [{"role": "user", "content": "q"}, 2, 1]


def test_session_id_from_constructor(engine: Engine) -> None:
    memory = SharedMemory(engine, "s", session_id="abc", enable_cache=False)
    assert memory["session_id"] == "abc"
    memory.close()


def test_data_proxy_writes_reach_storage(engine: Engine, shared: SharedMemory) -> None:
    shared.data["category"] = "billing"
    shared.data.priority = "high"
    other = SharedMemory(engine, "t", enable_cache=False)
    assert other.get("data") == {"category": "billing", "priority": "high"}
    assert other.data.category == "billing"
    assert other["data"]["priority"] == "high"
    with pytest.raises(AttributeError, match="no key 'missing'"):
        _ = other.data.missing
    shared["data"] = {"fresh": 1}
    assert other.data.to_dict() == {"fresh": 1}
    with pytest.raises(InvalidValue, match="data"):
        shared["data"] = [1]
    other.close()


def test_data_proxy_dict_methods(shared: SharedMemory) -> None:
    proxy = shared.data
    assert proxy.empty
    assert len(proxy) == 0
    proxy.merge({"a": 1, "b": 2})
    assert proxy.keys() == ["a", "b"]
    assert proxy.values() == [1, 2]
    assert proxy.items() == [("a", 1), ("b", 2)]
    assert "a" in proxy
    assert proxy == {"a": 1, "b": 2}
    assert proxy.get("z", 9) == 9
    assert proxy.delete("a") == 1
    assert proxy.delete("a") is None
    del proxy.b
    assert proxy.empty
    proxy["keys"] = "reachable by item"
    assert proxy["keys"] == "reachable by item"
    assert "keys" in repr(proxy)


def test_versions_and_set_if(shared: SharedMemory) -> None:
    assert shared.version("k") == 0
    assert shared.get_with_version("k") == (None, 0)
    assert shared.set_if("k", "a", version=None) == 1
    shared["k"] = "b"
    assert shared.get_with_version("k") == ("b", 2)
    with pytest.raises(Conflict, match=r"set_if 'k': expected version 1, found 2"):
        shared.set_if("k", "c", version=1)
    assert shared["k"] == "b"
    assert shared.set_if("k", "c", version=2) == 3
    with pytest.raises(Conflict, match="expected version 0, found 3"):
        shared.set_if("k", "d", version=0)
    with pytest.raises(InvalidKey, match="reserved"):
        shared.set_if("data", {}, version=0)


def test_bad_keys_and_names(engine: Engine, shared: SharedMemory) -> None:
    with pytest.raises(InvalidKey):
        shared[""] = 1
    with pytest.raises(InvalidKey):
        shared.get("a\nb")
    with pytest.raises(InvalidKey, match="shared memory name"):
        SharedMemory(engine, "bad name")


def test_all_storage_keys_carry_the_prefix_and_tag(engine: Engine, shared: SharedMemory) -> None:
    shared["a"] = 1
    shared.data.x = 1
    keys = list(engine.scan(""))
    assert keys
    assert all(k.startswith("shared:m:" + engine.tag("t") + ":") for k in keys)


def test_concurrent_writes_bump_version_once_each(engine: Engine, shared: SharedMemory) -> None:
    def work(index: int) -> None:
        memory = SharedMemory(engine, "t", writer=f"w{index}", enable_cache=False)
        for i in range(25):
            memory[f"own{index}"] = i
            memory["hot"] = [index, i]
            memory.data[f"d{index}"] = i  # read-modify-write of one stored dict: no lost field
        memory.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert shared.version("hot") == 100
    assert [shared.version(f"own{n}") for n in range(4)] == [25] * 4
    assert shared.data.to_dict() == {f"d{n}": 24 for n in range(4)}
