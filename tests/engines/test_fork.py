"""An engine opened before ``fork`` works in the child: the child's subscriptions and blocking
reads wake, its sweeper removes expired keys, a lock a parent thread held at the fork blocks
nothing, and the parent keeps its own subscriptions (gunicorn --preload, multiprocessing's fork,
Celery's prefork workers)."""

from __future__ import annotations

import os
import queue
import select
import sys
import threading
import time

import pytest

from _forked import held_by_a_thread, in_child
from memstack import ManualClock
from memstack.engines.base import Engine

_BOUND = 10.0  # generous: a child that never wakes is killed by in_child, not timed


def _wakes(engine: Engine, channel: str) -> bool:
    """Whether a subscription made here gets a message published here."""
    got: queue.SimpleQueue[str] = queue.SimpleQueue()
    with engine.subscribe(channel, got.put):
        engine.publish(channel, "hello")
        try:
            return got.get(timeout=_BOUND) == "hello"
        except queue.Empty:
            print(f"no message on {channel!r} in the child", file=sys.stderr)
            return False


def _swept(engine: Engine, key: str) -> bool:
    """Whether the background sweeper removes ``key`` (already expired on the engine's clock)."""
    until = time.monotonic() + _BOUND
    while time.monotonic() < until:
        if all(not where.startswith(key) for where, _ in engine.raw_items()):
            return True
        time.sleep(0.05)
    print(f"{key!r} was never swept in the child", file=sys.stderr)
    return False


def _started(engine: Engine) -> queue.SimpleQueue[str]:
    """A subscription of the parent, proven to deliver (so its background threads run)."""
    got: queue.SimpleQueue[str] = queue.SimpleQueue()
    engine.subscribe("parent", got.put)
    engine.publish("parent", "before")
    assert got.get(timeout=_BOUND) == "before"
    return got


def _sweeps(engine: Engine) -> bool:
    # Redis expires keys itself: the engine has no sweeper.
    return not engine.name.startswith("redis")


def test_a_forked_child_has_its_own_subscriptions_and_sweeps(engine: Engine, clock: ManualClock) -> None:
    parent = _started(engine)
    engine.set("ttl", "v", px=1000)

    def child() -> bool:
        clock.advance(2)  # the child's copy of the clock: the parent's sweeper keeps the key
        woke = _wakes(engine, "child")
        swept = not _sweeps(engine) or _swept(engine, "ttl")
        return woke and swept

    assert in_child(child, deadline=60)
    engine.publish("parent", "after")
    assert parent.get(timeout=_BOUND) == "after"
    # The child's sweeper removed the key from a store they share; a memory child, from its copy.
    assert engine.get("ttl") == (None if engine.name in ("sqlite", "postgres") else "v")


def _locks(engine: Engine) -> list[object]:
    """The locks a parent thread may hold at the fork: the engine's own, its listener's and its
    dispatcher's (a thread delivering holds them), a Redis engine's transport's and slot map's,
    the sweeper's, and the one inside a closed flag (a thread closing, or a sweeper waking)."""
    found = []
    parts = ("_events", "_listener", "_transport", "_topology", "_sweeper")
    for holder in (engine, *(getattr(engine, name, None) for name in parts)):
        for name in ("_lock", "_cond"):
            lock = getattr(holder, name, None) if holder is not None else None
            if lock is not None:
                found.append(lock)
        closed = getattr(holder, "_closed", None)
        event = getattr(closed, "_event", closed)  # a Flag wraps a threading.Event
        if isinstance(event, threading.Event):
            found.append(event._cond)  # type: ignore[attr-defined]
        dispatch = getattr(holder, "_dispatch", None)
        if dispatch is not None:
            found.append(dispatch._lock)
    return found


def test_a_lock_a_parent_thread_held_at_the_fork_blocks_nothing_in_the_child(engine: Engine) -> None:
    parent = _started(engine)
    locks = _locks(engine)
    assert locks

    def child() -> bool:
        woke = _wakes(engine, "child")
        topology = getattr(engine, "_topology", None)
        if topology is not None:  # what a cluster does after a failure: re-read the slot map
            topology.refresh(topology.version)
        engine.close()  # the child's copy: the parent's engine keeps working
        return woke

    for lock in locks:
        with held_by_a_thread(lock):  # type: ignore[arg-type]
            assert in_child(child, deadline=30), lock  # stuck on the parent's lock: killed, False
    engine.publish("parent", "after")
    assert parent.get(timeout=_BOUND) == "after"


def test_the_parents_subscriptions_are_closed_in_the_child_and_closing_them_there_changes_nothing(
    engine: Engine,
) -> None:
    got: queue.SimpleQueue[str] = queue.SimpleQueue()
    inherited = engine.subscribe("shared", got.put)
    engine.publish("shared", "before")
    assert got.get(timeout=_BOUND) == "before"

    def child() -> bool:
        mine: queue.SimpleQueue[str] = queue.SimpleQueue()
        with engine.subscribe("shared", mine.put):
            if not inherited.closed:
                return False
            inherited.close()  # must not drop the child's own subscriber of the channel
            engine.publish("shared", "child")
            try:
                return mine.get(timeout=_BOUND) == "child" and got.empty()
            except queue.Empty:
                return False

    assert in_child(child, deadline=60)
    assert not inherited.closed
    engine.publish("shared", "after")
    if engine.name != "memory":  # one store: the child's message reached the parent too
        assert got.get(timeout=_BOUND) == "child"
    assert got.get(timeout=_BOUND) == "after"


def test_a_child_subscription_gets_what_the_parent_publishes(engine: Engine) -> None:
    if engine.name == "memory":
        pytest.skip("a memory engine's child has a copy of the data: the two never meet again")
    _started(engine)
    ready, told = os.pipe()

    def publish_when_told() -> None:
        if select.select([ready], [], [], 60)[0] and os.read(ready, 1):
            engine.publish("to-child", "from the parent")

    publisher = threading.Thread(target=publish_when_told, daemon=True)
    publisher.start()

    def child() -> bool:
        got: queue.SimpleQueue[str] = queue.SimpleQueue()
        with engine.subscribe("to-child", got.put):
            os.write(told, b"!")
            try:
                return got.get(timeout=_BOUND) == "from the parent"
            except queue.Empty:
                return False

    try:
        assert in_child(child, deadline=60)
    finally:
        os.close(told)  # the thread's wait ends (empty read) if the child never told
        publisher.join(timeout=_BOUND)
        os.close(ready)


def _open_on(path: str) -> int:
    """How many of this process's file descriptors are open on ``path``."""
    fds = os.listdir("/proc/self/fd")
    return sum(1 for fd in fds if os.path.realpath(f"/proc/self/fd/{fd}") == os.path.realpath(path))


def test_a_child_starts_threads_and_opens_connections_only_on_first_use(engine: Engine) -> None:
    # A child that execs at once (subprocess with preexec_fn) or never touches the engine pays
    # nothing: renewal after the fork only resets state.
    _started(engine)
    path = getattr(engine, "path", None)

    def child() -> bool:
        alone = threading.enumerate() == [threading.current_thread()]
        before = _open_on(path) if path else 0
        engine.exists("k")  # the first use
        reopened = not path or _open_on(path) > before
        names = {thread.name for thread in threading.enumerate()}
        sweeping = not _sweeps(engine) or f"memstack-{engine.name}-sweep" in names
        if not (alone and reopened and sweeping):
            print(f"alone={alone} reopened={reopened} sweeping={sweeping}", file=sys.stderr)
        return alone and reopened and sweeping

    assert in_child(child, deadline=60)
