"""``AnnIndex``: ids in, nearest ids out, a removed or replaced id never answered under its old vector."""

from __future__ import annotations

import numpy as np
import pytest

from memstack.foundation.errors import InvalidValue
from memstack.index import ann

if not ann.available():
    pytest.skip("needs usearch (the embeddings extra)", allow_module_level=True)


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_nearest_gives_ids_and_cosines_and_forgets_removed_and_replaced_ids() -> None:
    rng = np.random.default_rng(11)
    rows = _unit(rng.normal(size=(300, 16)))
    index = ann.AnnIndex(16)
    index.extend([f"e{n}" for n in range(300)], rows)
    ids, cosines = index.nearest(rows[7], 5)
    assert ids[0] == "e7" and cosines[0] == pytest.approx(1.0, abs=0.02)
    assert list(cosines) == sorted(cosines, reverse=True)
    assert index.search(rows[7], 5) == list(zip(ids.tolist(), cosines.tolist(), strict=True))
    assert index.remove("e7") and not index.remove("e7")
    assert "e7" not in index.nearest(rows[7], 20)[0].tolist()
    index.add("e8", rows[200])  # replaced: found under its new vector, once
    found = index.nearest(rows[200], 5)[0].tolist()
    assert found[:2] in (["e8", "e200"], ["e200", "e8"]) and found.count("e8") == 1
    assert "e8" not in index.nearest(rows[8], 3)[0].tolist()
    index.extend([f"n{n}" for n in range(100)], _unit(rng.normal(size=(100, 16))))  # labels grow
    assert len(index) == 399 and index.nearest(rows[9], 1)[0].tolist() == ["e9"]
    assert index.nbytes > 399 * 16
    restored, meta = ann.AnnIndex.from_bytes(index.to_bytes({"v": 1}))
    assert meta == {"v": 1} and len(restored) == 399
    assert restored.nearest(rows[9], 1)[0].tolist() == ["e9"] and "e7" not in restored


def test_a_graph_of_many_dimensions_holds_bits_around_its_centre_and_says_so_in_its_snapshot() -> None:
    rng = np.random.default_rng(5)
    dim = ann.BITS_FROM
    assert ann.bits(dim) and not ann.bits(dim - 1)
    # every vector shares a large component: without the centre its sign would be one wasted bit
    rows = _unit(rng.normal(size=(400, dim)) + 3.0 * np.eye(dim)[0])
    index = ann.AnnIndex(dim)
    index.extend([f"e{n}" for n in range(400)], rows)
    ids, cosines = index.nearest(rows[3], 10)
    assert ids[0] == "e3" and cosines[0] == pytest.approx(1.0)
    assert list(cosines) == sorted(cosines, reverse=True)
    # built here: the serialised bits and links and the slack of vectors added in this process
    assert 400 * (dim // 8 + ann.SLACK_ADDED) < index.nbytes < 400 * 1024
    data = index.to_bytes({"v": 2})
    assert ann.current(data) and not ann.current(b"MSANN1\n{}\n")
    restored, meta = ann.AnnIndex.from_bytes(data)
    assert meta == {"v": 2} and restored.nearest(rows[3], 1)[0].tolist() == ["e3"]
    # a restored graph holds less beyond its serialised form than one built entry by entry
    assert restored.nbytes - restored._labels.nbytes + (ann.SLACK_ADDED - ann.SLACK) * 400 == (
        index.nbytes - index._labels.nbytes
    )
    with pytest.raises(InvalidValue):
        ann.AnnIndex.from_bytes(data.replace(b'"centre":"', b'"centre":"!', 1))


def test_a_graph_labelled_in_sequence_loads_and_keeps_answering_through_changes() -> None:
    # Graphs stored before labels were the ids' digests number their ids 0, 1, 2, ...
    rng = np.random.default_rng(4)
    rows = _unit(rng.normal(size=(200, 384)))
    ids = [f"e{n}" for n in range(200)]
    built = ann.AnnIndex(384)
    built.extend(ids, rows)
    graph = ann._new(384)
    graph.add(np.arange(200, dtype=np.uint64), built._coded(rows))
    old = ann.AnnIndex(384, graph, {i: n for n, i in enumerate(ids)}, built._centre)
    restored, _ = ann.AnnIndex.from_bytes(old.to_bytes({}))
    for index in (old, restored):
        assert len(index) == 200 and index.nearest(rows[5], 1)[0].tolist() == ["e5"]
        assert index.remove("e5") and "e5" not in index
        index.add("e5", rows[6])  # back under a label of its own
        index.add("new", rows[7])
        found = index.nearest(rows[6], 3)[0].tolist()
        assert "e5" in found and "e6" in found
        assert "new" in index.nearest(rows[7], 3)[0].tolist()
        assert sorted(index.ids()) == sorted([*ids, "new"])
