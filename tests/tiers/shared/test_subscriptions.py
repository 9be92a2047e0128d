"""Subscriptions to keys and glob patterns: ids, order, which operations notify, isolation of
callback errors (spec section 4 items 15-22)."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime

import pytest

from memstack import ManualClock
from memstack.engines import Engine
from memstack.foundation.errors import InvalidInput
from memstack.tiers.shared import MemoryChange, SharedMemory

from .conftest import Collector


def test_subscribe_delivers_change_fields(
    shared: SharedMemory, collector: Collector, clock: ManualClock
) -> None:
    sub_id = shared.subscribe("k", collector)
    assert isinstance(sub_id, str)
    assert sub_id
    shared.current_writer = "robot-a"
    shared["k"] = 1
    shared.set("k", 2, correlation_id="c-1")
    first, second = collector.wait_for(2)
    assert (first.key, first.value, first.previous, first.writer) == ("k", 1, None, "robot-a")
    assert first.created
    assert not first.updated
    assert (second.value, second.previous, second.correlation_id) == (2, 1, "c-1")
    assert second.updated
    assert first.timestamp == datetime.fromtimestamp(int(clock.now() * 1000) / 1000, UTC)
    assert first.network_name is None


def test_subscribe_several_keys_one_id(shared: SharedMemory, collector: Collector) -> None:
    sub_id = shared.subscribe("a", "b", callback=collector)
    shared["a"] = 1
    shared["b"] = 2
    shared["c"] = 3
    shared["z"] = 0  # a subscribed marker key to know delivery caught up
    marker = Collector()
    shared.subscribe("z2", marker)
    shared["z2"] = 1
    marker.wait_for(1)
    assert collector.wait_for(2)
    assert collector.keys == ["a", "b"]
    assert shared.unsubscribe(sub_id) is True
    assert shared.unsubscribe(sub_id) is False
    assert not shared.subscribed("a")
    assert not shared.subscribed("b")


def test_callback_required(shared: SharedMemory) -> None:
    with pytest.raises(InvalidInput, match=r"^Callback required for subscribe$"):
        shared.subscribe("k")
    with pytest.raises(InvalidInput, match=r"^Callback required for subscribe_pattern$"):
        shared.subscribe_pattern("k*")


def test_delivery_in_write_order_exact_before_pattern(shared: SharedMemory) -> None:
    calls: list[tuple[str, str, object]] = []
    done = threading.Event()

    def exact(change: MemoryChange) -> None:
        calls.append(("exact", change.key, change.value))

    def pattern(change: MemoryChange) -> None:
        calls.append(("pattern", change.key, change.value))
        if change.value == 49:
            done.set()

    shared.subscribe_pattern("step*", pattern)  # registered first, still runs after exact ones
    shared.subscribe("step1", exact)
    for i in range(50):
        shared[f"step{i % 3}"] = i
    assert done.wait(10)
    values = [v for kind, _, v in calls if kind == "pattern"]
    assert values == list(range(50))
    for i, (kind, key, value) in enumerate(calls):
        if kind == "exact":
            assert calls[i + 1] == ("pattern", key, value)


def test_pattern_subscription_glob(shared: SharedMemory, collector: Collector) -> None:
    shared.subscribe_pattern("analysis:*", collector)
    other = Collector()
    shared.subscribe_pattern("step?", other)
    shared["analysis:sentiment"] = 1
    shared["analysisXsentiment"] = 2
    shared["step10"] = 3
    shared["step1"] = 4
    assert [c.key for c in collector.wait_for(1)] == ["analysis:sentiment"]
    assert [c.key for c in other.wait_for(1)] == ["step1"]
    assert collector.keys == ["analysis:sentiment"]


def test_regex_metacharacters_are_literal(shared: SharedMemory, collector: Collector) -> None:
    shared.subscribe_pattern("a.b+[cd]", collector)
    for key in ("axbbc", "a.bbc", "a.b+e", "a.b+d"):
        shared[key] = 1
    assert [c.key for c in collector.wait_for(1)] == ["a.b+d"]


def test_subscribed_and_unsubscribe_keys(shared: SharedMemory, collector: Collector) -> None:
    shared.subscribe("a", collector)
    pattern_id = shared.subscribe_pattern("a*", collector)
    assert shared.subscribed("a")
    assert shared.subscribed("ab")
    assert not shared.subscribed("b")
    assert shared.unsubscribe_keys("a") is shared
    assert shared.subscribed("a")  # the pattern still covers it
    shared.unsubscribe(pattern_id)
    assert not shared.subscribed("a")


def test_which_operations_notify(shared: SharedMemory, collector: Collector) -> None:
    shared.subscribe_pattern("*", collector)
    shared["k"] = 1
    shared.delete("k")
    shared["j"] = 1
    shared.clear()
    shared.reset()
    shared["data"] = {"x": 1}
    shared.data.y = 2
    shared["results"] = [1]
    shared.append_result(2)
    shared.session_id = "s"
    shared.merge({"m1": 1, "session_id": "t", "m2": 2})
    shared["end"] = True
    changes = collector.wait_for(5)
    assert [c.key for c in changes] == ["k", "j", "m1", "m2", "end"]


def test_set_none_on_existing_is_deleted_change(shared: SharedMemory, collector: Collector) -> None:
    shared.subscribe("k", collector)
    shared["k"] = 1
    shared["k"] = None
    assert collector.wait_for(2)[1].deleted


def test_callback_exceptions_are_isolated(
    shared: SharedMemory, collector: Collector, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(change: MemoryChange) -> None:
        raise RuntimeError("boom")

    shared.subscribe("k", broken)
    shared.subscribe("k", collector)
    with caplog.at_level(logging.ERROR, logger="memstack.tiers.shared"):
        shared["k"] = 1  # the writer never sees the callback's error
        shared["k"] = 2
        assert [c.value for c in collector.wait_for(2)] == [1, 2]
    assert "subscription callback failed" in caplog.text


def test_each_callback_gets_its_own_change(shared: SharedMemory) -> None:
    seen: list[MemoryChange] = []
    done = threading.Event()

    def mutate(change: MemoryChange) -> None:
        change.value.append("mutated")
        seen.append(change)

    def check(change: MemoryChange) -> None:
        seen.append(change)
        done.set()

    shared.subscribe("k", mutate)  # the callback passed last, positionally
    shared.subscribe("k", callback=check)
    shared["k"] = [1]
    assert done.wait(10)
    assert seen[-1].value == [1]


def test_cross_instance_subscription(engine: Engine, shared: SharedMemory, collector: Collector) -> None:
    shared.subscribe("k", collector)
    other = SharedMemory(engine, "t", writer="other", enable_cache=False)
    other["k"] = "hello"
    [change] = collector.wait_for(1)
    assert (change.value, change.writer) == ("hello", "other")
    other.close()


def test_other_memory_names_are_isolated(engine: Engine, shared: SharedMemory, collector: Collector) -> None:
    shared.subscribe_pattern("*", collector)
    other = SharedMemory(engine, "t2", enable_cache=False)
    other["k"] = 1
    shared["mine"] = 1
    assert [c.key for c in collector.wait_for(1)] == ["mine"]
    other.close()
