"""Bulk deletion and independent batches sent together give what one call each would, on every
engine and through a tenant view."""

from __future__ import annotations

import pytest

from memstack import ManualClock
from memstack.engines import Engine
from memstack.engines.base import Op
from memstack.engines.bulk import BATCH_KEYS, delete_keys
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import InvalidInput, WrongType


def test_delete_keys_counts_the_keys_that_existed(engine: Engine, clock: ManualClock) -> None:
    untagged = [f"d:k{i}" for i in range(120)]  # keys of many Redis Cluster slots
    tagged = [f"d:{engine.tag('s')}:k{i}" for i in range(BATCH_KEYS + 20)]  # one slot, two batches
    for key in untagged:
        engine.set(key, "v")
    with engine.batch() as batch:
        for key in tagged:
            batch.rpush(key, "v")
    engine.set("d:dying", "v", px=5)
    engine.set("kept", "v")
    clock.advance(0.01)
    assert delete_keys(engine, [*untagged, "d:never", *tagged, "d:dying"]) == len(untagged) + len(tagged)
    assert list(engine.scan("d:")) == []
    assert engine.get("kept") == "v"
    assert delete_keys(engine, untagged) == 0
    assert delete_keys(engine, []) == 0


def _ops(engine: Engine, *calls: tuple[str, tuple[object, ...]]) -> list[Op]:
    """The ops of a batch of ``calls`` (command method, arguments), queued and not run."""
    batch = engine.batch()
    for name, args in calls:
        getattr(batch, name)(*args)
    return batch.ops


def test_batches_sent_together_answer_in_order(engine: Engine) -> None:
    a, b = engine.tag("a"), engine.tag("b")
    batches = [
        _ops(engine, ("set", (a + "k", "1")), ("incr", (a + "n", 2))),
        [],
        _ops(engine, ("get", (a + "k",)), ("sadd", (a + "s", "x", "y"))),
        _ops(engine, ("set", (b + "k", "2"))),
        _ops(engine, ("require_missing", (a + "s",)), ("set", (a + "never", "v"))),
        _ops(engine, ("smembers", (a + "s",))),
    ]
    results = engine.execute_many(batches)
    assert [r.applied for r in results] == [True, True, True, True, False, True]
    assert results[0].results == [True, 2] and results[1].results == []
    assert results[2].results == ["1", 2] and results[3].results == [True]
    assert results[5].results == [{"x", "y"}] and engine.get(a + "never") is None
    assert engine.execute_many([]) == []


def test_a_failing_batch_sent_with_others_changes_nothing(engine: Engine) -> None:
    a, b = engine.tag("a"), engine.tag("b")
    engine.set(b + "s", "a string")
    with pytest.raises(WrongType):
        engine.execute_many(
            [
                _ops(engine, ("set", (a + "k", "1"))),
                _ops(engine, ("set", (b + "x", "1")), ("sadd", (b + "s", "m"))),
            ]
        )
    assert engine.get(b + "x") is None and engine.get(b + "s") == "a string"


def test_a_tenant_view_sends_its_batches_under_its_prefix(engine: Engine) -> None:
    view = tenant_engine(engine, "acme")
    keys = [f"k{i}" for i in range(40)]
    for key in keys:
        view.set(key, "v")
    engine.set("k0", "not the tenant's")
    assert delete_keys(view, keys) == len(keys)
    assert list(view.scan("")) == [] and engine.get("k0") == "not the tenant's"
    with pytest.raises(InvalidInput, match="'nope'") as raised:
        view.execute_many([_ops(view, ("set", ("k", "v"))), [("nope", ("k",))]])
    assert "t:acme:" not in str(raised.value)  # named as the caller wrote it
