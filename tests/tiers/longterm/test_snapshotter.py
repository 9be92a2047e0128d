"""The process's snapshotters: one per scope written, the idle ones bounded in number, a pending one
never forgotten."""

from __future__ import annotations

import pytest

from memstack import Memory
from memstack.engines import Engine
from memstack.tiers.longterm import snapshotter
from memstack.tiers.longterm.layout import ScopeKeys


def test_idle_snapshotters_are_bounded_and_pending_ones_kept(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshotter, "IDLE_MAX", 4)
    monkeypatch.setattr(snapshotter, "MIN_ENTRIES", 3)
    monkeypatch.setattr(snapshotter, "QUIET", 3600.0)
    monkeypatch.setattr(snapshotter, "MAX_DELAY", 3600.0)
    mem = Memory(engine)
    scopes = [f"s{n}" for n in range(10)]
    for scope in scopes:
        mem.long_term(scope).save_many([{"content": f"note {i} of {scope}"} for i in range(3)])
    mine = [s for s in snapshotter._snapshotters.values() if s.engine is engine]
    assert len(mine) == 10  # each waits for its quiet period: none may be forgotten
    snapshotter.flush_all(engine)  # what close() does: every pending snapshot is written
    for scope in scopes:
        keys = ScopeKeys.of(engine, scope)
        assert engine.get(keys.snapshot_version) == engine.get(keys.version)
    for scope in scopes:  # flush_all forgot them (their engine closes next): new, idle ones
        assert snapshotter.snapshotter(engine, scope).idle
    assert sum(s.engine is engine for s in snapshotter._snapshotters.values()) <= 4
    mem.close()
