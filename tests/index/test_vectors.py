"""The index kit's vector index and codec (pure)."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

from memstack.index.codec import decode, encode, pack, unit_rows, unpack
from memstack.index.vectors import VectorIndex


def test_add_remove_top() -> None:
    index = VectorIndex(2)
    for i in range(40):  # past the initial capacity of 16 rows
        assert index.add(f"v{i}", [np.cos(i / 10), np.sin(i / 10)])
    assert len(index) == 40 and "v3" in index
    assert [i for i, _ in index.top([1, 0], 3)] == ["v0", "v1", "v2"]
    assert index.remove("v0") and not index.remove("v0")
    assert [i for i, _ in index.top([1, 0], 2)] == ["v1", "v2"]  # the moved last row still answers
    assert index.top([np.cos(3.9), np.sin(3.9)], 1)[0][0] == "v39"
    assert index.top([1, 0], None, least=0.99) == [
        (i, pytest.approx(s)) for i, s in index.top([1, 0], 9) if s >= 0.99
    ]
    assert index.top([0, 0], 3) == []  # a zero query compares to nothing
    assert not index.add("bad", [1, 2, 3]) and "bad" not in index  # another dimension
    index.add("v1", [0, 1])  # re-adding replaces
    assert index.top([0, 1], 1)[0] == ("v1", pytest.approx(1.0))
    index.clear()
    assert len(index) == 0 and index.top([1, 0]) == []


def test_an_id_with_several_rows_scores_its_best_row() -> None:
    index = VectorIndex(2)
    index.add("x", [1, 0])
    index.add("multi", [[0, 1], [0.6, 0.8]])
    index.add("y", [-1, 0])
    ids, sims = index.similarities([0, 1])
    assert dict(zip(ids, sims.tolist(), strict=True)) == pytest.approx({"x": 0, "multi": 1, "y": 0})
    ids, sims = index.similarities([1, 0])
    assert dict(zip(ids, sims.tolist(), strict=True)) == pytest.approx({"x": 1, "multi": 0.6, "y": -1})
    index.remove("x")  # moves other ids' rows into the holes
    index.add("multi", [[1, 0], [0, -1], [-1, 0]])
    assert [i for i, _ in index.top([0, -1])] == ["multi", "y"]
    index.remove("multi")
    assert index.top([1, 0]) == [("y", pytest.approx(-1.0))]
    assert not index.add("empty", np.zeros((0, 2)))


def test_rows_stay_consistent_through_random_changes() -> None:
    rng = np.random.default_rng(3)
    index, truth = VectorIndex(3), {}
    for step in range(400):
        key = f"k{rng.integers(20)}"
        if rng.random() < 0.3:
            assert index.remove(key) == (key in truth)
            truth.pop(key, None)
        else:
            rows = rng.normal(size=(int(rng.integers(1, 4)), 3))
            index.add(key, rows)
            truth[key] = unit_rows(rows)
        query = rng.normal(size=3)
        ids, sims = index.similarities(query)
        want = {k: float((m @ unit_rows(query)[0]).max()) for k, m in truth.items()}
        assert dict(zip(ids, sims.tolist(), strict=True)) == pytest.approx(want, abs=1e-5), step


def test_codec_round_trips() -> None:
    vector = np.array([0.25, -1.5, 3.0], dtype=np.float32)
    assert np.array_equal(unpack(pack(vector))[0], vector)  # type: ignore[index]
    rows = np.arange(6, dtype=np.float32).reshape(2, 3)
    stored = decode(encode(rows, "model", "hash"))
    assert stored is not None and (stored.model, stored.dim, stored.text_hash) == ("model", 3, "hash")
    assert np.array_equal(stored.rows, rows)
    assert decode(encode(rows), rows=1) is None  # one vector wanted, two stored
    assert decode("not json") is None and decode('{"d": 3, "v": "AAAAAA=="}') is None
    assert unpack("@@@") is None


def test_extend_builds_in_one_copy_and_columns_follow_ids() -> None:
    index = VectorIndex(2)
    index.extend(["a", "b", "c"], [[1, 0], [0, 2], [3, 4]])
    index.add("d", [[1, 1], [0, -1]])  # two vectors: two columns
    index.remove("a")
    assert sorted(index.ids()) == ["b", "c", "d", "d"] and index.columns().shape == (2, 4)
    for entry_id, column in zip(index.ids(), index.columns().T.tolist(), strict=True):
        assert entry_id != "b" or column == pytest.approx([0, 1])
        assert entry_id != "c" or column == pytest.approx([0.6, 0.8])
    with pytest.raises(ValueError, match="extend"):
        index.extend(["b"], [[1, 0]])  # already held
    with pytest.raises(ValueError, match="extend"):
        index.extend(["x", "y"], [[1, 0]])  # one vector for two ids
    index.extend([], np.zeros((0, 2)))
    assert len(index) == 3


def test_moments_follow_every_change_and_give_the_scans_mean_and_spread() -> None:
    rng = np.random.default_rng(5)
    index = VectorIndex(6)
    index.extend([f"e{n}" for n in range(30)], rng.normal(size=(30, 6)))
    index.moments()  # from here on kept up to date change by change
    for step in range(200):
        key = f"e{rng.integers(40)}"
        if rng.random() < 0.4:
            index.remove(key)
        else:
            index.add(key, rng.normal(size=6))
        total, outer, n = index.moments()
        columns = index.columns().astype(np.float64)
        assert n == columns.shape[1], step
        assert total == pytest.approx(columns.sum(axis=1), abs=1e-6), step
        assert outer == pytest.approx(columns @ columns.T, abs=1e-6), step
    query = unit_rows(rng.normal(size=6))[0].astype(np.float64)
    total, outer, n = index.moments()
    _, sims = index.similarities(query)
    mean = float(query @ total) / n
    assert mean == pytest.approx(float(sims.mean()), abs=1e-6)
    assert (float(query @ outer @ query) / n - mean**2) ** 0.5 == pytest.approx(float(sims.std()), abs=1e-5)
    index.clear()
    assert index.moments()[2] == 0 and not index.moments()[0].any()


@pytest.mark.parametrize("bits", [4, 8])
def test_a_quantised_index_holds_its_bits_and_stays_consistent_through_changes(bits: int) -> None:
    rng = np.random.default_rng(7)
    dim = 63  # odd: a 4-bit row pads its last byte
    index = VectorIndex(dim)
    index.extend([f"e{n}" for n in range(40)], rng.normal(size=(40, dim)))
    index.add("multi", rng.normal(size=(2, dim)))  # an id with two rows keeps its best one
    before, floats = index.nbytes, index.columns().copy()
    with pytest.raises(ValueError, match="bits"):
        index.quantise(6)
    index.quantise(bits)
    assert index.quantised == bits
    # each vector (of the matrix's room) its codes and a 4-byte scale instead of four bytes a
    # component; the id maps stay as they were
    saved, per_row = before - index.nbytes, 4 * dim - ((dim + 1) // 2 if bits == 4 else dim) - 4
    assert saved % per_row == 0 and saved // per_row >= index.columns().shape[1]
    top = 7 if bits == 4 else 127
    step = np.abs(floats).max(axis=0) / top  # half a step of each vector's own scale at most
    assert (np.abs(index.columns() - floats) <= step / 2 + 1e-6).all()
    # the moments are the float vectors' (taken before quantising)
    total, outer, n = index.moments()
    assert total == pytest.approx(floats.sum(axis=1), abs=1e-5)
    assert outer == pytest.approx(floats @ floats.T, abs=1e-5)
    for change in range(150):
        key = f"e{rng.integers(50)}"
        total, outer = (m.copy() for m in index.moments()[:2])
        if key in index:  # taken out as held
            held = index.gather([key])[:, 0].astype(np.float64)
            total, outer = total - held, outer - np.outer(held, held)
        if rng.random() < 0.4:
            index.remove(key)
        else:
            vector = unit_rows(rng.normal(size=dim))[0].astype(np.float64)
            index.add(key, vector)  # added as given
            total, outer = total + vector, outer + np.outer(vector, vector)
        got, got_outer, n = index.moments()
        assert n == index.columns().shape[1], change
        assert got == pytest.approx(total, abs=1e-4), change
        assert got_outer == pytest.approx(outer, abs=1e-4), change
    ids = index.ids()
    single = [n for n, entry_id in enumerate(ids) if entry_id != "multi"][:5]
    assert np.array_equal(index.gather([ids[n] for n in single]), index.columns()[:, single])
    query = unit_rows(rng.normal(size=dim))[0]
    listed, sims = index.similarities(query)
    by_id = dict(zip(listed, sims.tolist(), strict=True))
    exact = query @ index.columns()
    for n, entry_id in enumerate(ids):
        if entry_id != "multi":
            assert by_id[entry_id] == pytest.approx(float(exact[n]), abs=1e-5)
    best = sorted(by_id.items(), key=lambda item: -item[1])[:3]
    assert [i for i, _ in index.top(query, 3)] == [i for i, _ in best]


@pytest.mark.parametrize("bits", [4, 8])
def test_the_count_is_what_tracemalloc_sees_the_id_maps_included(bits: int) -> None:
    rng = np.random.default_rng(3)
    ids = [f"id{n:08d}" for n in range(20_000)]  # the caller's strings: not the index's bytes
    rows = rng.normal(size=(20_000, 32)).astype(np.float32)
    gc.collect()
    tracemalloc.start()
    try:
        index = VectorIndex(32)
        index.extend(ids, rows)
        index.add("multi", rng.normal(size=(3, 32)))
        index.quantise(bits)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # the matrix is a third of it at 32 dimensions: the id dict, its slot numbers and the arrays count
    assert 0.9 <= index.nbytes / traced <= 1.1, (index.nbytes, traced)
