"""Fixtures of the shared-memory tests: a ``SharedMemory`` per engine and a change collector."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from memstack.engines import Engine
from memstack.tiers.shared import MemoryChange, SharedMemory


class Collector:
    """A subscription callback that records changes and lets a test wait for N of them."""

    def __init__(self) -> None:
        self.changes: list[MemoryChange] = []
        self._cond = threading.Condition()

    def __call__(self, change: MemoryChange) -> None:
        with self._cond:
            self.changes.append(change)
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[MemoryChange]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.changes) >= count, timeout), (
                f"expected {count} changes, got {self.changes}"
            )
            return list(self.changes)

    @property
    def keys(self) -> list[str]:
        return [c.key for c in self.changes]


@pytest.fixture
def shared(engine: Engine) -> Iterator[SharedMemory]:
    """The shared memory ``t`` on each engine, without a cache."""
    memory = SharedMemory(engine, "t", enable_cache=False)
    yield memory
    memory.close()


@pytest.fixture
def collector() -> Collector:
    return Collector()
