"""delete_many removes several entries per batch, with the same traces as delete(), on every engine."""

from __future__ import annotations

import pytest

from memstack.engines import Engine
from memstack.foundation.errors import InvalidKey
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.layout import ScopeKeys


def test_deletes_what_exists_and_counts_it(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    for n in range(7):
        lt.save(id=f"e{n}", content=f"green tea number {n}")
    reader = LongTermMemory(engine, "u")
    assert len(reader.search("tea")) == 7  # a warm cache elsewhere must see the deletions
    assert lt.delete_many(["e1", "E2", "e3", "missing", "e1"]) == 3  # ids are case-insensitive
    assert sorted(h.entry.id for h in reader.search("tea")) == ["e0", "e4", "e5", "e6"]
    assert lt.get("e2") is None and len(lt) == 4
    assert lt.delete_many([]) == 0 and lt.delete_many(["missing"]) == 0


def test_many_chunks(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    from memstack.tiers.longterm import deletes

    monkeypatch.setattr(deletes, "DELETE_CHUNK", 3)
    lt = LongTermMemory(engine, "u")
    for n in range(10):
        lt.save(id=f"e{n}", content="x")
    assert lt.delete_many([f"e{n}" for n in range(9)]) == 9
    assert [e.id for e in lt.entries()] == ["e9"]


def test_a_bad_id_deletes_nothing(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    lt.save(id="e1", content="kept")
    with pytest.raises(InvalidKey):
        lt.delete_many(["e1", "bad id!"])
    assert lt.get("e1") is not None


def test_the_snapshot_goes_with_the_entries(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    lt.save(id="e1", content="secret words")
    lt.save(id="e2", content="other words")
    assert lt.snapshot()
    keys = ScopeKeys.of(engine, "u")
    assert lt.delete_many(["e1"]) == 1
    assert engine.mget([keys.snapshot, keys.snapshot_version]) == [None, None]
