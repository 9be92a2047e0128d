"""A snapshot serialises the scope's index and graph outside the cache lock: the saves made
meanwhile neither wait for it nor get lost, the snapshot says exactly its version, and a cold
process reading it sees every acknowledged save."""

from __future__ import annotations

import threading
from typing import cast

import pytest

from memstack.engines import Engine
from memstack.index import ann as graph
from memstack.index import registry
from memstack.search.bm25_state import Bm25State, encode_state
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory, index_cache, snapshotter
from memstack.tiers.longterm.layout import ScopeKeys
from memstack.tiers.longterm.snapshot import load

EMBEDDER = FakeEmbedder(dim=24)
KEY = (EMBEDDER.model_id, EMBEDDER.dim)
WORDS = [
    "tea",
    "coffee",
    "jazz",
    "piano",
    "river",
    "hike",
    "market",
    "concert",
    "sister",
    "garden",
    "train",
    "paris",
]
LIVENESS = 120.0
"""A bound on waiting for the saves made during the serialisation; never reached unless they wait
for it (they would then finish only after it, and the test fails)."""


def _fill(engine: Engine, with_graph: bool, monkeypatch: pytest.MonkeyPatch) -> LongTermMemory:
    if with_graph:
        monkeypatch.setattr(graph, "ANN_FROM", 10)
    lt = LongTermMemory(engine, "u", embedder=EMBEDDER)
    lt.save_many([{"id": f"e{n}", "content": f"{WORDS[n % 12]} {WORDS[n * 5 % 12]} {n}"} for n in range(40)])
    assert lt.flush_embeddings(60)
    lt.search("tea jazz", limit=5)  # builds the cache (the graph too, with_graph)
    return lt


def _during_serialisation(lt: LongTermMemory, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """Run saves on another thread while the snapshot exports its index; what they saw."""
    seen: dict[str, object] = {}

    def saves() -> None:  # saves without an id: each brings the cache up to date (duplicate check)
        seen["new"] = {lt.save(content=f"zebra stripes {n}").id for n in range(5)}
        lt.save(id="e1", content="walrus tusks")  # an update of an entry the snapshot holds
        lt.save(content="zebra crossing")
        seen["flushed"] = lt.flush_embeddings(60)

    cache = index_cache.scope_cache(lt.engine, lt.scope)
    with cache.lock:
        index = cache.index("default")
    export_state = index.export_state

    def exporting() -> Bm25State:  # the serialisation: done without the lock, saves meanwhile
        worker = threading.Thread(target=saves)
        worker.start()
        worker.join(LIVENESS)
        seen["finished"] = not worker.is_alive()
        seen["frozen_ids"] = None if cache.export is None else set(cache.export.index.ids())
        return export_state()  # (saves still waiting, if any, finish once the lock is free)

    monkeypatch.setattr(index, "export_state", exporting)
    seen["written"] = snapshotter.take(lt.engine, lt.scope)
    return seen


@pytest.mark.parametrize("with_graph", [False, True], ids=["bm25", "graph"])
def test_saves_during_a_snapshot_neither_wait_nor_get_lost(
    engine: Engine, with_graph: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if with_graph and not graph.available():
        pytest.skip("usearch is not installed")
    lt = _fill(engine, with_graph, monkeypatch)
    before = {f"e{n}" for n in range(40)}
    seen = _during_serialisation(lt, monkeypatch)
    assert seen["written"] and seen["finished"] and seen["flushed"]
    new = cast(set[str], seen["new"])
    assert seen["frozen_ids"] == before  # the serialised index did not move under the snapshot
    # The snapshot is exactly the scope at its version: the saves made meanwhile are after it.
    keys = ScopeKeys.of(engine, "u")
    snap = load(engine, keys, str(engine.get(keys.epoch)))
    assert snap is not None and set(snap.index.ids()) == before
    assert snap.index.search("walrus", 5) == []
    # This process's cache took every change made meanwhile: index and graph as a fresh build.
    cache = index_cache.scope_cache(engine, "u")
    with cache.lock:
        assert cache.export is None
        cache.refresh(engine, keys)
        index = cache.index("default")
        assert set(index.ids()) == set(cache.texts) and new < set(cache.texts)
        assert [i for i, _ in index.search("walrus", 5)] == ["e1"]
        if with_graph:
            held, vectors = cache.anns[KEY], cache.vector_index(*KEY)
            assert sorted(held.ids()) == sorted(vectors.ids()) and len(held) == 46
    hits = lt.search("zebra stripes", limit=10)
    assert {h.entry.id for h in hits} >= new


def test_a_cold_process_reading_the_snapshot_sees_every_acknowledged_save(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    lt = _fill(engine, False, monkeypatch)
    seen = _during_serialisation(lt, monkeypatch)
    assert seen["written"]
    registry.drop(("longterm", engine.identity, "u"))  # a new process: no cache, the snapshot stored
    cold = LongTermMemory(engine, "u")
    hits = cold.search("zebra stripes", limit=10)
    assert {h.entry.id for h in hits if "stripes" in h.entry.content} == seen["new"]
    assert [h.entry.id for h in cold.search("walrus tusks", limit=3)] == ["e1"]
    assert not index_cache.scope_cache(engine, "u").warm  # answered from the snapshot and the log


def test_a_deletion_during_the_serialisation_writes_no_snapshot(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    lt = _fill(engine, False, monkeypatch)
    done: list[bool] = []

    def encode(state: object, meta: dict[str, object]) -> bytes:
        worker = threading.Thread(target=lambda: done.append(lt.delete("e3")))
        worker.start()
        worker.join(LIVENESS)
        assert not worker.is_alive()  # the deletion did not wait for the serialisation either
        return encode_state(state, meta)  # type: ignore[arg-type]

    monkeypatch.setattr(snapshotter, "encode_state", encode)
    assert snapshotter.take(engine, "u") is False and done == [True]
    keys = ScopeKeys.of(engine, "u")
    assert engine.get(keys.snapshot) is None  # it may hold e3's terms: never written
    cache = index_cache.scope_cache(engine, "u")
    with cache.lock:
        cache.refresh(engine, keys)
        assert "e3" not in cache.index("default") and "e3" not in cache.texts


def test_a_snapshot_failing_while_frozen_leaves_nothing_frozen(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    lt = _fill(engine, False, monkeypatch)

    def broken(*args: object, **options: object) -> object:
        raise RuntimeError("graph encoder broke")

    monkeypatch.setattr(snapshotter.ann, "encoder", broken)
    with pytest.raises(RuntimeError, match="graph encoder broke"):
        snapshotter.take(engine, "u")
    assert index_cache.scope_cache(engine, "u").export is None
    lt.save(content="after the failure")
    assert [h.entry.content for h in lt.search("failure", limit=1)] == ["after the failure"]
    assert engine.get(ScopeKeys.of(engine, "u").snapshot) is None
