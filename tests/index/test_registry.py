"""The registry of in-process indexes: one per key, least recently used dropped past its bounds."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import pytest

from _forked import held_by_a_thread, in_child
from memstack.foundation.errors import InvalidConfiguration
from memstack.index import registry
from memstack.index.mirror import Mirror, Row


class Sized(Mirror):
    def __init__(self, nbytes: int) -> None:
        super().__init__()
        self.nbytes = nbytes

    def reset(self) -> None:
        pass

    def take(self, rows: Sequence[Row]) -> None:
        pass

    def approx_bytes(self) -> int:
        return self.nbytes


@pytest.fixture(autouse=True)
def _empty() -> Iterator[None]:
    registry.clear("test")
    yield
    registry.clear("test")


def test_one_mirror_per_key() -> None:
    first = registry.mirror(("test", "a"), lambda: Sized(1), Sized)
    assert registry.mirror(("test", "a"), lambda: Sized(2), Sized) is first


def test_the_memory_bound_drops_the_least_recently_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTACK_INDEX_MEMORY_MB", "1")
    half = 600 << 10
    a = registry.mirror(("test", "a"), lambda: Sized(half), Sized)
    registry.mirror(("test", "b"), lambda: Sized(half), Sized)  # over the bound: "a" goes
    assert ("test", "a") not in registry.held() and ("test", "b") in registry.held()
    assert registry.mirror(("test", "a"), lambda: Sized(half), Sized) is not a  # rebuilt anew
    assert ("test", "b") not in registry.held()
    registry.mirror(("test", "big"), lambda: Sized(4 << 20), Sized)  # the one in use is never dropped
    assert ("test", "big") in registry.held()


def test_a_bad_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTACK_INDEX_MEMORY_MB", "lots")
    with pytest.raises(InvalidConfiguration, match="MEMSTACK_INDEX_MEMORY_MB"):
        registry.memory_bound()


def test_stats_count_bytes_entries_and_evictions(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.clear()
    monkeypatch.setenv("MEMSTACK_INDEX_MEMORY_MB", "1")
    before = registry.stats().evictions
    for n in range(5):
        registry.mirror(("test", n), lambda: Sized(300_000), Sized)
    held = registry.stats()
    assert held.entries == 3 and held.bytes == 900_000 and held.bound == 1 << 20
    assert held.evictions == before + 2


def test_an_index_grown_after_its_lookup_counts_at_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.clear()
    monkeypatch.setenv("MEMSTACK_INDEX_MEMORY_MB", "1")
    grown = registry.mirror(("test", "grown"), lambda: Sized(0), Sized)
    grown.nbytes = 900_000  # its caller filled it after the lookup
    registry.mirror(("test", "next"), lambda: Sized(300_000), Sized)  # 1.2 MB now: "grown" goes
    assert list(registry.held()) == [("test", "next")]


def test_the_default_bound_is_sized_to_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMSTACK_INDEX_MEMORY_MB", raising=False)
    machine_mb = (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) >> 20
    assert registry.default_memory_mb() == min(4096, max(256, machine_mb // 8))
    assert registry.memory_bound() == registry.default_memory_mb() << 20


def test_a_forked_child_builds_its_own_indexes() -> None:
    """A parent thread holding the registry's lock, or an index's own lock, at the fork never
    blocks the child: it starts with no index and builds what it asks for."""
    held = registry.mirror(("test", "busy"), lambda: Sized(7), Sized)

    def child() -> bool:
        found = registry.mirror(("test", "busy"), lambda: Sized(8), Sized)
        with found.lock:
            return found is not held and found.nbytes == 8 and registry.stats().entries == 1

    with held_by_a_thread(registry._lock):
        assert in_child(child, deadline=30)
    with held_by_a_thread(held.lock):
        assert in_child(child, deadline=30)
    assert registry.mirror(("test", "busy"), lambda: Sized(9), Sized) is held  # the parent keeps its own
