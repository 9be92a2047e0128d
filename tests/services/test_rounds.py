"""The background rounds of the dream scheduler and the memory loop."""

from __future__ import annotations

import logging
import os
import threading
import time

import pytest

from _forked import held_by_a_thread, in_child
from memstack.services.rounds import Rounds


def test_a_failing_round_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []
    second = threading.Event()

    def run() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise RuntimeError("first round breaks")
        second.set()

    rounds = Rounds("memstack-test-rounds", run, 0.0, logging.getLogger("memstack.test"), "test round failed")
    with caplog.at_level(logging.ERROR, logger="memstack.test"):
        rounds.start()
        assert rounds.running
        assert second.wait(10)
        rounds.stop()
    assert not rounds.running
    assert len(calls) >= 2
    failed = [r for r in caplog.records if r.getMessage() == "test round failed"]
    assert failed and failed[0].exc_info is not None


def test_start_twice_keeps_one_thread_and_a_stopped_rounds_starts_again() -> None:
    ran = threading.Event()
    rounds = Rounds("memstack-test-rounds", ran.set, 60.0, logging.getLogger("memstack.test"), "failed")
    rounds.start()
    first = rounds._thread
    rounds.start()
    assert rounds._thread is first
    assert ran.wait(10)
    rounds.stop()
    ran.clear()
    rounds.start()
    assert ran.wait(10)  # the stop of the first run does not end the second at once
    rounds.stop()
    assert not rounds.running


def test_a_forked_child_does_not_inherit_the_running_thread_and_starts_its_own() -> None:
    rounders: list[int] = []  # the pid of each round (appending needs no lock a fork could hold)
    rounds = Rounds(
        "memstack-test-rounds",
        lambda: rounders.append(os.getpid()),
        0.01,
        logging.getLogger("memstack.test"),
        "failed",
    )
    rounds.start()

    def child() -> bool:
        inherited = rounds.running  # the parent's thread does not run here
        rounds.start()
        until = time.monotonic() + 10
        while os.getpid() not in rounders and time.monotonic() < until:
            time.sleep(0.01)
        ran = os.getpid() in rounders
        rounds.stop()
        return not inherited and ran and not rounds.running

    # A parent thread stopping the rounds at the fork holds the stop flag's lock.
    stop = getattr(rounds._stop, "_event", rounds._stop)  # the threading.Event inside
    with held_by_a_thread(stop._cond):
        assert in_child(child, deadline=60)
    assert rounds.running
    rounds.stop()
