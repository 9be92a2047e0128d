"""SlidingWindows on every engine: window of messages, idle expiry (lazy and swept), isolation,
config validation, session ids, hetumind's node output."""

from __future__ import annotations

from typing import Any

import pytest

from _forked import held_by_a_thread, in_child
from memstack import Memory
from memstack.compat.n8n import SimpleMemoryConfig, SlidingWindows
from memstack.compat.n8n.windows import is_idle, parse_input_messages
from memstack.engines import Engine
from memstack.foundation.clock import ManualClock
from memstack.foundation.errors import InvalidConfiguration, InvalidKey, InvalidValue


@pytest.fixture
def windows(engine: Engine) -> Any:
    w = SlidingWindows(engine, cleanup_interval=None)
    yield w
    w.close()


def chat(windows: SlidingWindows, workflow: str, session: str, turns: int, config: Any = None) -> None:
    for i in range(turns):
        windows.save(workflow, {"session_id": session, "input": f"q{i}"}, {"output": f"a{i}"}, config)


def test_window_is_the_last_n_messages(windows: SlidingWindows) -> None:
    chat(windows, "wf", "s1", 3)
    loaded = windows.load("wf", {"session_id": "s1"})
    assert loaded == {
        "chat_history": [
            {"role": "assistant", "content": "a0"}, {"role": "user", "content": "q1"},
            {"role": "assistant", "content": "a1"}, {"role": "user", "content": "q2"},
            {"role": "assistant", "content": "a2"},
        ]
    }  # fmt: skip
    three = windows.load("wf", {"session_id": "s1"}, {"context_window_length": 3, "memory_key": "h"})
    assert [m["content"] for m in three["h"]] == ["a1", "q2", "a2"]


def test_return_messages_false_gives_a_buffer_string(windows: SlidingWindows) -> None:
    chat(windows, "wf", "s1", 1)
    loaded = windows.load("wf", {"session_id": "s1"}, {"return_messages": False})
    assert loaded == {"chat_history": "Human: q0\nAI: a0"}


def test_same_session_in_two_workflows_is_isolated(windows: SlidingWindows) -> None:
    chat(windows, "wf_a", "s1", 1)
    windows.save("wf_b", {"session_id": "s1", "input": "other"}, {"output": "world"})
    assert [m["content"] for m in windows.load("wf_a", {"session_id": "s1"})["chat_history"]] == ["q0", "a0"]
    assert [m["content"] for m in windows.load("wf_b", {"session_id": "s1"})["chat_history"]] == [
        "other",
        "world",
    ]
    assert windows.load("wf_a", {"session_id": "s2"}) == {"chat_history": []}


def test_idle_window_expires_lazily_on_access(windows: SlidingWindows, clock: ManualClock) -> None:
    one_minute = {"buffer_expiry_minutes": 1}
    chat(windows, "wf", "s1", 1, one_minute)
    clock.advance(59)
    assert len(windows.load("wf", {"session_id": "s1"}, one_minute)["chat_history"]) == 2  # a read refreshes
    clock.advance(60)
    assert len(windows.load("wf", {"session_id": "s1"}, one_minute)["chat_history"]) == 2  # 60 s idle: kept
    clock.advance(60.5)
    assert windows.load("wf", {"session_id": "s1"}, one_minute) == {"chat_history": []}
    chat(windows, "wf", "s1", 1)
    assert [m["content"] for m in windows.messages("wf", "s1")] == ["q0", "a0"]


def test_sweep_removes_idle_windows(windows: SlidingWindows, engine: Engine, clock: ManualClock) -> None:
    chat(windows, "wf", "old", 1)
    clock.advance(30 * 60)
    chat(windows, "wf", "fresh", 1)
    clock.advance(30 * 60 + 1)
    assert windows.sweep() == {"total_entries": 2, "expired_entries": 1, "active_entries": 1}
    assert not any("old" in key for key in engine.scan("win:"))
    assert windows.messages("wf", "fresh") != []
    assert windows.sweep() == {"total_entries": 1, "expired_entries": 0, "active_entries": 1}


def test_engine_ttl_reclaims_windows_nobody_sweeps(
    windows: SlidingWindows, engine: Engine, clock: ManualClock
) -> None:
    chat(windows, "wf", "s1", 1)
    clock.advance(2 * 3600 + 1)
    assert list(engine.scan("win:")) == []


def test_without_expiry_windows_live_forever(windows: SlidingWindows, clock: ManualClock) -> None:
    chat(windows, "wf", "s1", 1, {"buffer_expiry_minutes": None})
    clock.advance(10 * 24 * 3600)
    assert windows.sweep()["expired_entries"] == 0
    assert len(windows.messages("wf", "s1")) == 2


def test_background_sweeper_starts_on_demand_and_stops_on_close(engine: Engine) -> None:
    windows = SlidingWindows(engine, cleanup_interval=300.0)
    assert not windows.sweeping
    chat(windows, "wf", "s1", 1)
    assert windows.sweeping
    windows.close()
    assert not windows.sweeping
    windows.close()  # idempotent


def test_memory_close_stops_the_sweeper(mem: Memory) -> None:
    windows = mem.windows
    chat(windows, "wf", "s1", 1)
    assert windows.sweeping
    mem.close()
    assert not windows.sweeping


def test_session_id_from_input_or_custom_key(windows: SlidingWindows) -> None:
    with pytest.raises(InvalidConfiguration, match="session_id"):
        windows.load("wf", {"input": "no session"})
    with pytest.raises(InvalidConfiguration, match="session_id"):
        windows.load("wf", {"session_id": ""})
    custom = {"session_id_type": "custom_key", "custom_session_key": "fixed"}
    windows.save("wf", {"input": "q"}, {"output": "a"}, custom)
    assert windows.session_id({"session_id": "ignored"}, custom) == "fixed"
    assert len(windows.messages("wf", "fixed")) == 2


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"context_window_length": 0}, "context_window_length must be greater than 0"),
        ({"input_key": ""}, "input_key cannot be empty"),
        ({"memory_key": ""}, "memory_key cannot be empty"),
        ({"output_key": ""}, "output_key cannot be empty"),
        (
            {"session_id_type": "custom_key"},
            "custom_session_key is required when session_id_type is CustomKey",
        ),
        ({"session_id_type": "custom_key", "custom_session_key": ""}, "custom_session_key is required"),
        ({"context_window_length": 0, "input_key": ""}, "context_window_length must be greater than 0"),
        ({"session_id_type": "header"}, "session_id_type 'header'"),
        ({"buffer_expiry_minutes": 0}, "buffer_expiry_minutes 0"),
        ({"colour": "red"}, "unknown fields"),
    ],
)
def test_config_validation_messages(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidConfiguration, match=r"^Invalid SimpleMemory configuration: ") as info:
        SimpleMemoryConfig.coerce(fields)
    assert message in str(info.value)


def test_config_defaults_are_hetuminds() -> None:
    assert SimpleMemoryConfig().to_dict() == {
        "session_id_type": "from_input", "custom_session_key": None, "context_window_length": 5,
        "input_key": "input", "memory_key": "chat_history", "output_key": "output",
        "return_messages": True, "buffer_expiry_minutes": 60, "shared_across_nodes": False,
    }  # fmt: skip


def test_node_execution_output(windows: SlidingWindows, clock: ManualClock) -> None:
    chat(windows, "wf", "s1", 2)
    out = windows.execute(
        "wf",
        {
            "session_id": "s1",
            "messages": [{"role": "user", "content": "hello", "id": "m-9", "metadata": {"k": 1}}],
        },
        {"context_window_length": 3},
    )
    assert out["session_id"] == "s1"
    assert out["workflow_id"] == "wf"
    assert out["config"]["context_window_length"] == 3
    assert [m["content"] for m in out["chat_history"]] == ["q1", "a1", "hello"]
    last = out["chat_history"][-1]
    assert last["message_id"] == "m-9"
    assert last["metadata"] == {"k": 1}
    assert last["role"] == "user"
    assert last["timestamp"].endswith("Z")
    assert out["stats"]["total_messages"] == 5
    assert out["stats"]["context_window_length"] == 3
    assert out["stats"]["session_id"] == "s1"


def test_input_message_parsing() -> None:
    assert parse_input_messages({"chat_history": [{"role": "wizard", "content": "x"}]}) == [
        {"role": "user", "content": "x"}
    ]
    assert parse_input_messages({"prompt": "p", "content": "c"}) == [{"role": "user", "content": "p"}]
    assert parse_input_messages({"content": "c"}) == [{"role": "user", "content": "c"}]
    assert parse_input_messages({"other": 1}) == []
    with pytest.raises(InvalidValue, match="Message missing 'role' field"):
        parse_input_messages({"messages": [{"content": "x"}]})
    with pytest.raises(InvalidValue, match="Message missing 'content' field"):
        parse_input_messages({"messages": [{"role": "user"}]})


def test_bad_ids_and_fields(windows: SlidingWindows) -> None:
    with pytest.raises(InvalidKey, match="workflow_id"):
        windows.load("a__b", {"session_id": "s"})
    with pytest.raises(InvalidKey, match="session_id"):
        windows.load("wf", {"session_id": "has space"})
    with pytest.raises(InvalidValue, match="'output'"):
        windows.save("wf", {"session_id": "s", "input": "q"}, {"answer": "a"})
    assert windows.messages("wf", "s") == []


def test_retention_caps_each_buffer(engine: Engine) -> None:
    windows = SlidingWindows(engine, cleanup_interval=None, max_messages=4)
    chat(windows, "wf", "s1", 5)
    assert [m["content"] for m in windows.messages("wf", "s1")] == ["q3", "a3", "q4", "a4"]
    assert windows.clear("wf", "s1") is True
    assert windows.messages("wf", "s1") == []


def test_idle_boundary_is_strict() -> None:
    assert not is_idle(0, 1000, 1000)
    assert is_idle(0, 1000, 1001)
    assert not is_idle(0, 0, 10**12)


def test_a_forked_child_sweeps_in_its_own_thread(engine: Engine) -> None:
    windows = SlidingWindows(engine, cleanup_interval=300.0)
    chat(windows, "wf", "s1", 1)
    assert windows.sweeping

    def child() -> bool:
        asleep = not windows.sweeping  # the parent's thread does not run here
        chat(windows, "wf", "s2", 1)  # the first touch starts the child's own
        started = windows.sweeping
        windows.close()
        return asleep and started and not windows.sweeping

    with held_by_a_thread(windows._lock):  # a parent thread starting or stopping the sweeper
        assert in_child(child, deadline=60)
    assert windows.sweeping  # the parent's thread runs on
    windows.close()
