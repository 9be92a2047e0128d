"""Writes that repeat do not multiply, on every engine: the same words saved twice are one entry
with one history version; a retried save by id writes no version."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import AlreadyExists
from memstack.tiers.longterm import MemoryEntry
from memstack.tiers.longterm.repeats import equal_current, same_version


def test_the_same_save_twice_is_one_entry_and_one_version(mem: Memory, clock: ManualClock) -> None:
    lt = mem.long_term("u1")
    first = lt.save(content="The user lives in Porto.")
    clock.advance(5)
    again = lt.save(content="  the USER lives in porto ")  # case, spaces, edge punctuation
    assert again.id == first.id and again.updated_at is None
    assert len(lt.entries()) == 1 and [e.op for e in lt.history(first.id)] == ["create"]
    other = lt.save(content="The user lives in Porto, Portugal")  # other words: a new entry
    assert other.id != first.id and len(lt.entries()) == 2


def test_a_retried_save_by_id_writes_no_version(mem: Memory, clock: ManualClock) -> None:
    lt = mem.long_term("u1")
    lt.save(id="home", content="Porto", tags=["city"], subject="u1")
    clock.advance(5)
    lt.save(id="home", content="Porto", tags=["city"], subject="u1")
    assert [e.op for e in lt.history("home")] == ["create"]
    lt.save(id="home", content="Lisbon", tags=["city"], subject="u1")
    assert [e.op for e in lt.history("home")] == ["create", "update"]


def test_a_superseded_entry_is_no_equal() -> None:
    old = MemoryEntry("a", "Porto")
    assert equal_current([old], "porto!", 0.0) == old
    gone = MemoryEntry("b", "Porto", valid_to=datetime(2020, 1, 1, tzinfo=UTC), superseded_by="c")
    assert equal_current([gone], "porto", 2e9) is None
    assert same_version(old, MemoryEntry("a", "Porto")) and not same_version(old, MemoryEntry("a", "Lisbon"))


def test_a_create_by_id_is_a_no_op_again_and_never_overwrites_other_content(mem: Memory) -> None:
    memory = mem.long_term("creates")
    first = memory.save(id="c1", content="Ada likes tea", create=True)
    assert memory.save(id="c1", content="Ada likes tea", create=True) == first
    assert len(memory.history("c1")) == 1
    memory.save(id="c1", content="Ada likes coffee")  # an update by someone else
    with pytest.raises(AlreadyExists, match="c1"):
        memory.save(id="c1", content="Ada likes tea", create=True)
    assert memory.get("c1").content == "Ada likes coffee" and len(memory.history("c1")) == 2
