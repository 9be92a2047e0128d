"""Each session operation is one atomic engine call (one round trip on Redis), counted on a real
engine through a pass-through view."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memstack.engines import Engine
from memstack.engines.base import BatchResult, Op
from memstack.engines.forwarding import ForwardingEngine
from memstack.tiers.session import SessionStore


class Counting(ForwardingEngine):
    """The real engine, with every ``execute`` counted."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(inner)
        self.calls: list[list[str]] = []

    def execute(self, ops: Sequence[Op]) -> BatchResult:
        self.calls.append([name for name, _ in ops])
        return self.inner.execute(ops)


def _count(engine: Counting, run: Callable[[], object]) -> int:
    engine.calls.clear()
    run()
    return len(engine.calls)


def test_one_call_per_operation(engine: Engine) -> None:
    counting = Counting(engine)
    store = SessionStore(counting, max_sessions=0)
    store.create("s", ttl_hours=1)
    assert _count(counting, lambda: store.put("s", "k", {"v": 1})) == 1
    assert counting.calls[0][0] == "require_exists"
    assert counting.calls[0].count("copy_ttl") == 1  # one op aligns the value, key set and history
    assert _count(counting, lambda: store.increment("s", "n")) == 1
    assert _count(counting, lambda: store.get("s", "k")) == 1
    assert _count(counting, lambda: store.keys("s")) == 1
    assert _count(counting, lambda: store.history("s")) == 1
    assert _count(counting, lambda: store.resume("s")) == 1
    assert _count(counting, lambda: store.clear("s", "k")) == 2  # read what exists, then one write


def test_summarising_put_adds_one_read_and_one_write(engine: Engine) -> None:
    counting = Counting(engine)
    store = SessionStore(counting, max_history=4, max_sessions=0)
    store.create("s")
    for i in range(4):
        store.put("s", f"k{i}", i)
    assert _count(counting, lambda: store.put("s", "k4", 4)) == 3
    assert store.history("s", 0)[0]["op"] == "summary"
