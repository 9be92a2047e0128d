"""Delta injection: each memory once per session, across engine instances, ids case-insensitive."""

from __future__ import annotations

import threading

import pytest

from memstack import ManualClock
from memstack.engines import Engine, open_engine
from memstack.foundation.errors import InvalidKey, InvalidSessionId, InvalidValue
from memstack.tiers.longterm import InjectionTracker


def test_first_mark_only(engine: Engine) -> None:
    tracker = InjectionTracker(engine)
    assert tracker.try_mark("s1", "abc") is True
    assert tracker.try_mark("s1", "abc") is False
    assert tracker.try_mark("s1", "ABC") is False  # one id rule everywhere: case-insensitive
    assert tracker.try_mark("s2", "abc") is True
    assert tracker.was_injected("s1", "Abc")
    assert not tracker.was_injected("s3", "abc")


def test_clear_forgets_one_session(engine: Engine) -> None:
    tracker = InjectionTracker(engine)
    tracker.try_mark("s1", "a")
    tracker.try_mark("s2", "a")
    tracker.clear("s1")
    tracker.clear("unknown")
    assert tracker.try_mark("s1", "a") is True
    assert tracker.try_mark("s2", "a") is False


def test_holds_across_engine_instances(engine_kind: str, engine_url_for: str, engine: Engine,
                                       clock: ManualClock) -> None:  # fmt: skip
    if engine_kind == "memory":
        pytest.skip("two memory:// engines never share data")
    assert InjectionTracker(engine).try_mark("sx", "m1") is True
    with open_engine(engine_url_for, clock=clock) as other:
        assert InjectionTracker(other).try_mark("sx", "m1") is False
        assert InjectionTracker(other).try_mark("sx", "m2") is True
    assert InjectionTracker(engine).try_mark("sx", "m2") is False


def test_concurrent_marks_have_one_winner(engine: Engine) -> None:
    tracker = InjectionTracker(engine)
    results: list[bool] = []
    lock = threading.Lock()

    def mark() -> None:
        won = tracker.try_mark("race", "m")
        with lock:
            results.append(won)

    threads = [threading.Thread(target=mark) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]


def test_ttl_expires_the_record(engine: Engine, clock: ManualClock) -> None:
    tracker = InjectionTracker(engine, ttl=60)
    assert tracker.try_mark("t", "m")
    clock.advance(59)
    assert not tracker.try_mark("t", "m")  # renews the TTL
    clock.advance(59)
    assert not tracker.try_mark("t", "m")
    clock.advance(61)
    assert tracker.try_mark("t", "m")


def test_validation(engine: Engine) -> None:
    tracker = InjectionTracker(engine)
    with pytest.raises(InvalidSessionId):
        tracker.try_mark("bad id", "m")
    with pytest.raises(InvalidKey):
        tracker.try_mark("s", "a/b")
    with pytest.raises(InvalidValue):
        InjectionTracker(engine, ttl=0)


def test_try_mark_many_is_try_mark_in_one_batch(engine: Engine) -> None:
    tracker = InjectionTracker(engine)
    tracker.try_mark("m", "a")
    assert tracker.try_mark_many("m", ["a", "B", "b", "c"]) == [False, True, False, True]
    assert tracker.try_mark_many("m", []) == []
    assert tracker.was_injected("m", "C")
