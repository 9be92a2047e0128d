"""The label table of a graph's ids: digests as labels, odd ones when two meet, lookups both ways."""

from __future__ import annotations

import gc
import random
import tracemalloc

import numpy as np
import pytest

from memstack.index import labels as module
from memstack.index.labels import LabelTable, digest


def check(table: LabelTable, model: dict[str, int]) -> None:
    assert len(table) == len(model)
    assert dict(table.items()) == model
    for entry_id, label in model.items():
        assert entry_id in table and table.label(entry_id) == label
    wanted = [*model.values(), 12345, (1 << 63) + 999_999]
    assert table.ids_of(wanted).tolist() == [*model, None, None]
    assert len(set(model.values())) == len(model)  # a label names one id at a time


@pytest.mark.parametrize("spread", [None, 7])  # 7: every digest one of 7 values, so most ids meet
def test_adds_and_removes_keep_both_ways_right(monkeypatch: pytest.MonkeyPatch, spread: int | None) -> None:
    if spread is not None:
        monkeypatch.setattr(module, "digest", lambda entry_id: digest(entry_id) % spread)
    rng = random.Random(5)
    table, model = LabelTable(), {}
    for step in range(3000):
        entry_id = f"id{rng.randrange(400)}"
        if entry_id in model and rng.random() < 0.5:
            assert table.remove(entry_id) == model.pop(entry_id)
        elif entry_id not in model:
            model[entry_id] = table.add(entry_id)
            if spread is None:
                assert model[entry_id] == digest(entry_id)
        if step % 500 == 0:
            check(table, model)
    check(table, model)
    assert table.remove("never") is None and "never" not in table and 3 not in table
    copied = table.copy()
    some = next(iter(model))
    copied.remove(some)
    assert some in table and some not in copied


def test_a_bulk_fill_matches_adds_and_keeps_given_labels() -> None:
    ids = [f"e{n}" for n in range(5000)]
    bulk, one = LabelTable(), LabelTable()
    assert bulk.fill(ids) == [one.add(i) for i in ids] == [digest(i) for i in ids]
    check(bulk, {i: digest(i) for i in ids})
    loaded = LabelTable(len(ids))  # a graph labelled in sequence, as an older snapshot stores it
    assert loaded.fill(ids, list(range(len(ids)))) == list(range(len(ids)))
    check(loaded, {i: n for n, i in enumerate(ids)})
    assert len(loaded.odd) == len(ids)
    fresh = loaded.add("new")  # its digest, or an odd label when that is taken
    assert fresh == digest("new") or fresh >= 1 << 63
    twice = LabelTable()  # two ids given one label: the second gets an odd one
    first, second = twice.fill(["a", "b"], [5, 5])
    assert first == 5 and second >= 1 << 63 and dict(twice.items()) == {"a": 5, "b": second}


def test_the_count_is_what_tracemalloc_sees() -> None:
    ids = [f"id{n:08d}" for n in range(50_000)]  # the caller's strings: not the table's bytes
    gc.collect()
    tracemalloc.start()
    try:
        table = LabelTable()
        table.fill(ids)
        for entry_id in ids[:1000]:
            table.remove(entry_id)
        table.add("x", 17)  # an odd label: the dict counts
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert 0.9 <= table.nbytes / traced <= 1.1, (table.nbytes, traced)
    assert table.nbytes / len(table) < 45
    assert np.array_equal(table.ids_of([digest(ids[-1])]), np.array([ids[-1]], dtype=object))


def test_shared_ids_are_the_callers_objects() -> None:
    table = LabelTable()
    table.fill(["".join(["a", str(n)]) for n in range(100)])  # strings of their own
    table.add("odd", 3)
    mine = ["".join(["a", str(n)]) for n in range(100)] + ["odd"]
    table.share(mine)
    held = {id(i) for i, _ in table.items()}
    assert held == {id(i) for i in mine}
    assert next(i for i in table.odd) is mine[-1]
