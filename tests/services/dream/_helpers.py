"""Helpers of the dream tests: a scope with entries at known times, answers in the contract's shape."""

from __future__ import annotations

import json
from typing import Any

from memstack import ManualClock, Memory
from memstack.tiers.longterm import LongTermMemory, MemoryEntry


def seeded(mem: Memory, n: int = 4, scope: str = "u1") -> tuple[LongTermMemory, list[MemoryEntry]]:
    """``n`` entries saved one minute apart (the first is the oldest)."""
    memory = mem.long_term(scope)
    clock = mem.clock
    assert isinstance(clock, ManualClock)
    entries = []
    for i in range(n):
        entries.append(memory.save(content=f"fact number {i} about apples", category="facts", tags=[f"t{i}"]))
        clock.advance(60)
    return memory, entries


def answer(to_delete: list[str] | None = None, to_save: list[dict[str, Any]] | None = None) -> str:
    return json.dumps({"toDelete": to_delete or [], "toSave": to_save or []})
