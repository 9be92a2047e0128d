"""A shared memory opened before ``fork`` works in the child: it listens anew there, so blocking
reads wake and its callbacks (copies of the parent's) run for the changes the child sees."""

from __future__ import annotations

import sys
import threading

from _forked import in_child
from memstack.foundation.errors import WaitTimeout
from memstack.tiers.shared import SharedMemory

from .conftest import Collector


def test_a_shared_memory_listening_before_the_fork_wakes_reads_and_callbacks_in_the_child(
    shared: SharedMemory, collector: Collector
) -> None:
    shared.subscribe("seen", collector)  # the parent listens, and its drainer thread runs
    shared["seen"] = 1
    collector.wait_for(1)

    def child() -> bool:
        writer = threading.Timer(0.05, shared.set, ("k", "from the child"))
        writer.start()
        try:
            woke = shared.get("k", wait=10) == "from the child"
        except WaitTimeout:
            print("the blocking read never woke in the child", file=sys.stderr)
            return False
        writer.join()
        shared["seen"] = 2
        return woke and [c.value for c in collector.wait_for(2)] == [1, 2]

    assert in_child(child, deadline=60)
    shared["seen"] = 3
    # The parent sees the child's write too, unless the child wrote to a memory engine's copy.
    seen = [1, 3] if shared.engine.name == "memory" else [1, 2, 3]
    assert [c.value for c in collector.wait_for(len(seen))] == seen
