"""The registry of in-process indexes: one per key, least recently used dropped past its bounds."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

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
