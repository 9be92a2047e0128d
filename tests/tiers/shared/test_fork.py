"""A shared memory opened before ``fork`` works in the child: it listens anew there, so blocking
reads wake and its callbacks (copies of the parent's) run for the changes the child sees."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

import pytest

from _forked import held_by_a_thread, in_child
from memstack import ManualClock
from memstack.engines.base import Engine
from memstack.foundation.errors import WaitTimeout
from memstack.tiers.shared import Network, SharedMemory

from .conftest import Collector


def test_a_shared_memory_listening_before_the_fork_wakes_reads_and_callbacks_in_the_child(
    shared: SharedMemory, collector: Collector
) -> None:
    shared.subscribe("seen", collector)  # the parent listens, and its drainer thread runs
    shared["seen"] = 1
    collector.wait_for(1)

    assert in_child(_wakes_and_calls_back(shared, collector), deadline=60)
    shared["seen"] = 3
    # The parent sees the child's write too, unless the child wrote to a memory engine's copy.
    seen = [1, 3] if shared.engine.name == "memory" else [1, 2, 3]
    assert [c.value for c in collector.wait_for(len(seen))] == seen


def _wakes_and_calls_back(shared: SharedMemory, collector: Collector, key: str = "k") -> Callable[[], bool]:
    """Work for a child: a blocking read of ``key`` wakes on the child's write, and the callback
    on "seen" (which saw 1 in the parent) runs for the child's write of 2."""

    def child() -> bool:
        writer = threading.Timer(0.05, shared.set, (key, "from the child"))
        writer.start()
        try:
            woke = shared.get(key, wait=10) == "from the child"
        except WaitTimeout:
            print("the blocking read never woke in the child", file=sys.stderr)
            return False
        writer.join()
        shared["seen"] = 2
        return woke and [c.value for c in collector.wait_for(2)] == [1, 2]

    return child


@pytest.mark.parametrize("which", ["memory", "callbacks", "waiters", "clock", "network"])
def test_a_lock_a_parent_thread_held_at_the_fork_blocks_nothing_in_the_child(
    which: str, engine: Engine, clock: ManualClock, collector: Collector
) -> None:
    # The memory's lock is held while it subscribes on the engine (on Redis and PostgreSQL that
    # waits for the server), the callbacks' and waiters' locks while a change is dispatched, the
    # clock's while any thread reads the time, a network's while it opens a memory.
    network = Network(engine, "forked")
    shared = network.memory
    shared.subscribe("seen", collector)
    shared["seen"] = 1
    collector.wait_for(1)
    locks = {
        "memory": shared._lock,
        "callbacks": shared._subs._lock,
        "waiters": shared._waiters._lock,
        "clock": clock._lock,
        "network": network._lock,
    }
    work = _wakes_and_calls_back(shared, collector, key=f"held-{which}")

    def child() -> bool:
        return work() and network.agent("child").name == shared.name

    with held_by_a_thread(locks[which]):
        assert in_child(child, deadline=60)  # stuck on the parent's lock: killed, False
    network.close()
