"""Atomic counters and loss-free summarisation under threads and processes."""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

import pytest

from memstack import Memory
from memstack.tiers.session import SessionStore

from ._workers import increment_many


def _covered(history: list[dict[str, Any]], op: str) -> int:
    """How many ``op`` entries the history accounts for (summaries included)."""
    total = 0
    for entry in history:
        if entry["op"] == "summary":
            total += entry["op_counts"].get(op, 0)
        elif entry["op"] == op:
            total += 1
    return total


def test_threads_increment_exactly(mem: Memory) -> None:
    store = SessionStore(mem.engine, max_history=50)
    store.create("s")
    errors: list[BaseException] = []
    start = threading.Barrier(16)

    def work() -> None:
        try:
            start.wait()
            for _ in range(250):
                store.increment("s", "count")
        except BaseException as exc:  # collected and re-raised by the test thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.get("s", "count") == 4000
    history = store.history("s", 0)
    # Concurrent summarisers never lose an entry: every increment is accounted for exactly once.
    assert _covered(history, "increment") == 4000
    summaries = [e for e in history if e["op"] == "summary"]
    assert len(summaries) == 1
    assert history[0]["op"] == "summary"
    assert summaries[0]["summarized_count"] + len(history) - 1 == 4000


def test_processes_increment_exactly(mem: Memory, engine_kind: str, engine_url_for: str) -> None:
    if engine_kind == "memory":
        pytest.skip("the in-process engine is not shared between processes")
    mem.sessions.create("p")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=increment_many, args=(engine_url_for, "p", "n", 1000)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=110)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert mem.sessions.get("p", "n") == 4000
    assert _covered(mem.sessions.history("p", 0), "increment") == 4000
