"""Node isolation of sliding windows on every engine (spec 5 item 23, n8n's N8N-9916): two memory
nodes of one workflow with one session id keep separate buffers unless a node opts into sharing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memstack.compat.n8n import SimpleMemoryConfig, SlidingWindows
from memstack.engines import Engine
from memstack.foundation.clock import ManualClock
from memstack.foundation.errors import InvalidConfiguration, InvalidKey

SHARED = {"shared_across_nodes": True}


@pytest.fixture
def windows(engine: Engine) -> Iterator[SlidingWindows]:
    w = SlidingWindows(engine, cleanup_interval=None)
    yield w
    w.close()


def say(windows: SlidingWindows, text: str, node: str | None, config: dict[str, Any] | None = None) -> None:
    windows.save("wf", {"session_id": "s1", "input": text}, {"output": text.upper()}, config, node_id=node)


def contents(windows: SlidingWindows, node: str | None, config: dict[str, Any] | None = None) -> list[str]:
    loaded = windows.load("wf", {"session_id": "s1"}, config, node_id=node)
    return [m["content"] for m in loaded["chat_history"]]


def test_two_nodes_with_one_session_keep_separate_buffers(windows: SlidingWindows) -> None:
    say(windows, "q-a", "agent_a")
    say(windows, "q-b", "agent_b")
    assert contents(windows, "agent_a") == ["q-a", "Q-A"]
    assert contents(windows, "agent_b") == ["q-b", "Q-B"]
    assert contents(windows, None) == []  # the workflow's shared buffer holds neither
    assert windows.messages("wf", "s1", node_id="agent_a")[0]["content"] == "q-a"


def test_shared_across_nodes_is_the_seed_buffer(windows: SlidingWindows) -> None:
    say(windows, "seed", None)  # no node id: the seed's {workflowId}__{sessionId} buffer
    say(windows, "q-a", "agent_a", SHARED)
    say(windows, "q-b", "agent_b", SHARED)
    expected = ["SEED", "q-a", "Q-A", "q-b", "Q-B"]
    assert contents(windows, "agent_a", SHARED) == expected
    assert contents(windows, None) == expected
    assert contents(windows, "agent_a") == []  # agent_a's own buffer was never written


def test_node_execute_output_and_clear(windows: SlidingWindows) -> None:
    out = windows.execute("wf", {"session_id": "s1", "prompt": "hi"}, node_id="n1")
    assert out["stats"]["total_messages"] == 1
    assert (
        windows.execute("wf", {"session_id": "s1", "prompt": "yo"}, node_id="n2")["stats"]["total_messages"]
        == 1
    )
    assert windows.clear("wf", "s1", node_id="n1") is True
    assert windows.messages("wf", "s1", node_id="n1") == []
    assert [m["content"] for m in windows.messages("wf", "s1", node_id="n2")] == ["yo"]
    assert windows.clear("wf", "s1", node_id="n1") is False


def test_a_session_id_with_double_underscores_never_reaches_a_node_buffer(windows: SlidingWindows) -> None:
    # Seed key "wf__n1__s1" (session "n1__s1") and node key (node n1, session s1) stay apart.
    windows.save("wf", {"session_id": "n1__s1", "input": "seed"}, {"output": "x"})
    say(windows, "node", "n1")
    assert [m["content"] for m in windows.messages("wf", "n1__s1")] == ["seed", "x"]
    assert contents(windows, "n1") == ["node", "NODE"]


def test_node_windows_expire_and_are_swept(windows: SlidingWindows, clock: ManualClock) -> None:
    say(windows, "q", "n1")
    say(windows, "q", None)
    clock.advance(61 * 60)
    assert windows.sweep() == {"total_entries": 2, "expired_entries": 2, "active_entries": 0}
    assert windows.messages("wf", "s1", node_id="n1") == []


@pytest.mark.parametrize("node", ["", "a__b", "_a", "a b", "x" * 129, 7])
def test_bad_node_ids_are_refused(windows: SlidingWindows, node: object) -> None:
    with pytest.raises(InvalidKey, match="node_id"):
        windows.load("wf", {"session_id": "s1"}, node_id=node)  # type: ignore[arg-type]  # the bad value is the point


def test_shared_across_nodes_must_be_a_bool() -> None:
    with pytest.raises(InvalidConfiguration, match="shared_across_nodes"):
        SimpleMemoryConfig(shared_across_nodes="yes").validate()  # type: ignore[arg-type]  # the bad value is the point
    assert SimpleMemoryConfig.coerce(SHARED).shared_across_nodes is True
