"""Texts that differ in a number or an identifier are never near duplicates (a digit changes the
fact), however alike the rest: not for the dedupe pass, not for the save policy."""

from __future__ import annotations

import pytest

from memstack.engines import Engine
from memstack.tiers.longterm import LongTermMemory, MemoryEntry
from memstack.tiers.longterm.similar import duplicate_groups

PAIRS = [
    (
        "The customer reported invoice INV-2041 unpaid since last month",
        "The customer reported invoice INV-2047 unpaid since last month",
    ),
    (
        "The user's flight to Lisbon leaves from gate 12 on Monday morning",
        "The user's flight to Lisbon leaves from gate 13 on Monday morning",
    ),
    (
        "The service runs on Python 3.11 in the staging cluster today",
        "The service runs on Python 3.12 in the staging cluster today",
    ),
]


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_a_different_number_or_identifier_is_another_fact(a: str, b: str) -> None:
    entries = [MemoryEntry(id="a", content=a), MemoryEntry(id="b", content=b)]
    assert duplicate_groups(entries, "near") == []
    again = [MemoryEntry(id="a", content=a), MemoryEntry(id="c", content=a.replace("The ", "the ", 1) + "!")]
    assert [len(g) for g in duplicate_groups(again, "near")] == [2]  # the same marks still merge


def test_the_save_policy_keeps_both(engine: Engine) -> None:
    memories = LongTermMemory(engine, "s")
    for a, b in PAIRS:
        first = memories.save(content=a, dedupe="near")
        second = memories.save(content=b, dedupe="near")
        assert first.id != second.id
        assert memories.save(content=a + ".", dedupe="near").id == first.id  # a true duplicate
