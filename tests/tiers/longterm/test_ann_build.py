"""A graph built from a copy of the vectors is brought up to the changes made while it was built."""

from __future__ import annotations

import numpy as np
import pytest

from memstack.index import ann as graph
from memstack.index.vectors import VectorIndex
from memstack.tiers.longterm.ann_build import reconcile

if not graph.available():
    pytest.skip("usearch is not installed", allow_module_level=True)


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_reconcile_drops_removed_adds_new_and_re_adds_changed_vectors() -> None:
    rng = np.random.default_rng(4)
    current = VectorIndex(16)
    current.extend([f"e{n}" for n in range(200)], _unit(rng.normal(size=(200, 16))))
    ids, columns = current.ids(), current.columns().copy()
    built = graph.AnnIndex(16)
    built.extend(ids, columns.T)
    # meanwhile: one removed, one re-embedded, one added
    current.remove("e3")
    moved = _unit(rng.normal(size=(1, 16)))[0]
    current.add("e5", moved)
    fresh = _unit(rng.normal(size=(1, 16)))[0]
    current.add("new", fresh)
    reconcile(built, ids, columns, current)
    assert sorted(built.ids()) == sorted(current.ids())
    assert built.nearest(moved, 1)[0].tolist() == ["e5"]
    assert built.nearest(fresh, 1)[0].tolist() == ["new"]
    assert "e5" not in built.nearest(columns[:, ids.index("e5")], 1)[0].tolist()
