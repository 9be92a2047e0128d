"""The background rounds of the dream scheduler and the memory loop."""

from __future__ import annotations

import logging
import threading

import pytest

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
