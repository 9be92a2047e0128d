"""The change log every entry set keeps, read since a version, on every engine."""

from __future__ import annotations

import pytest

from memstack.engines import Engine
from memstack.index import changelog
from memstack.index.changelog import SetKeys, changed_ids, changes_since, log_change


def test_changed_ids_reads_the_tail_of_the_log() -> None:
    log = ["put a", "put b", "del a", "vec b"]  # versions 7..10
    assert changed_ids(10, 10, log) == set()
    assert changed_ids(8, 10, log) == {"a", "b"}
    assert changed_ids(9, 10, log) == {"b"}
    assert changed_ids(6, 10, log) == {"a", "b"}
    assert changed_ids(5, 10, log) is None  # the log does not reach back: rebuild
    assert changed_ids(12, 10, log) is None  # the version went back (a forget): rebuild


def test_changes_since_a_version(engine: Engine) -> None:
    keys = SetKeys("t:{x}:")
    assert changes_since(engine, keys, 0) == (0, set())
    for op, entry in [("put", "a"), ("put", "b"), ("del", "a")]:
        batch = engine.batch()
        log_change(batch, keys, op, entry)
        batch.execute()
    epoch = engine.get(keys.epoch)
    assert epoch is not None
    assert changes_since(engine, keys, 0) == (3, {"a", "b"})
    assert changes_since(engine, keys, 2, seen=3) == (3, {"a"})
    batch = engine.batch()
    keys.record(batch, "put", ["c", "d"])  # one version per id, the ids set kept
    batch.execute()
    assert changes_since(engine, keys, 3) == (5, {"c", "d"})
    assert engine.smembers(keys.ids) == {"c", "d"} and engine.get(keys.epoch) == epoch


def test_a_log_trimmed_past_a_version_says_so(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(changelog, "LOG_MAX", 2)
    keys = SetKeys("t:{y}:")
    batch = engine.batch()
    keys.record(batch, "put", ["a", "b", "c"])
    batch.execute()
    assert changes_since(engine, keys, 0) == (3, None)
    assert changes_since(engine, keys, 1) == (3, {"b", "c"})


def test_restart_starts_a_new_epoch(engine: Engine) -> None:
    keys = SetKeys("t:{z}:")
    batch = engine.batch()
    keys.record(batch, "put", ["a"])
    batch.execute()
    epoch = engine.get(keys.epoch)
    batch = engine.batch()
    keys.restart(batch)
    batch.execute()
    assert engine.get(keys.epoch) not in (None, epoch) and engine.smembers(keys.ids) == set()


def test_a_guarded_change_trims_the_log_only_when_it_may_pass_the_bound(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changelog, "LOG_MAX", 3)
    keys = SetKeys("t:{g}:")
    trims = []
    for version in range(6):  # each batch guarded to find `version` (as a warm cache's put is)
        batch = engine.batch()
        batch.require_equal(keys.version, str(version) if version else None)
        log_change(batch, keys, "put", f"e{version}", after=version)
        trims.append(any(op[0] == "ltrim" for op in batch.ops))
        assert batch.execute().applied
        assert engine.llen(keys.log) == min(version + 1, 3)
    assert trims == [False, False, False, True, True, True]
    assert changes_since(engine, keys, 3) == (6, {"e3", "e4", "e5"})
    assert changes_since(engine, keys, 2) == (6, None)  # trimmed past version 2: rebuild
