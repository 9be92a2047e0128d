"""Across processes: workers (separate Python processes opening the engine by URL) coordinate
through blocking reads, subscriptions and compare-and-set, with no lost update."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memstack.engines import Engine
from memstack.tiers.shared import SharedMemory

from .conftest import Collector

WORKER = Path(__file__).with_name("_worker.py")
WORKERS = 4
INCREMENTS = 50


@pytest.fixture
def cross_process(engine_kind: str) -> None:
    if engine_kind == "memory":
        pytest.skip("the memory engine lives in one process")


@pytest.mark.usefixtures("cross_process")
def test_workers_coordinate_without_lost_updates(engine: Engine, engine_url_for: str) -> None:
    memory = SharedMemory(engine, "mp", writer="coordinator", enable_cache=False)
    done = Collector()
    memory.subscribe_pattern("done:*", done)
    procs = [
        subprocess.Popen([sys.executable, str(WORKER), engine_url_for, str(i), str(INCREMENTS)])
        for i in range(WORKERS)
    ]
    try:
        ready = memory.get(*[f"ready:{i}" for i in range(WORKERS)], wait=60)
        assert set(ready) == {f"ready:{i}" for i in range(WORKERS)}
        memory["go"] = True  # wakes the workers blocked on get("go", wait=...)
        finished = memory.get(*[f"done:{i}" for i in range(WORKERS)], wait=120)
        assert len(finished) == WORKERS
        assert sorted(c.writer or "" for c in done.wait_for(WORKERS)) == [f"w{i}" for i in range(WORKERS)]
    finally:
        for proc in procs:
            assert proc.wait(timeout=120) == 0
        memory.close()
    assert memory.get_with_version("counter") == (WORKERS * INCREMENTS, WORKERS * INCREMENTS)
