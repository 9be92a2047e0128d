"""A graph-backed search re-scores its hits from the float vectors the engine stores (4 bits held)."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from memstack.engines import Engine
from memstack.engines.forwarding import ForwardingEngine
from memstack.foundation.clock import ManualClock
from memstack.index import ann as graph
from memstack.index import registry
from memstack.index.codec import unit_rows
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory, index_cache
from memstack.tiers.longterm.ann_exact import reader
from memstack.tiers.longterm.index_cache import ScopeCache
from memstack.tiers.longterm.layout import ScopeKeys
from memstack.tiers.longterm.vectors import StoredVector, encode_vector, text_hash

if not graph.available():
    pytest.skip("usearch is not installed", allow_module_level=True)

WORDS = ["tea", "coffee", "jazz", "piano", "river", "hike", "market", "concert", "sister", "train", "paris"]
EMBEDDER = FakeEmbedder(dim=384)


def vector_scores(lt: LongTermMemory, query: str, graph_from: int) -> dict[str, float]:
    """Each hit's vector cosine, from a fresh cache with the graph used from ``graph_from`` vectors."""
    registry.drop(("longterm", lt.engine.identity, lt.scope))
    old, graph.ANN_FROM = graph.ANN_FROM, graph_from
    try:
        hits = lt.search(query, limit=30)
    finally:
        graph.ANN_FROM = old
    cache = index_cache.scope_cache(lt.engine, lt.scope)
    assert bool(cache.anns) == (graph_from <= 600)
    return {h.entry.id: h.vector for h in hits if h.vector is not None}


def test_graph_backed_hits_carry_the_cosines_of_the_exact_scan(engine: Engine, clock: ManualClock) -> None:
    rng = random.Random(3)
    lt = LongTermMemory(engine, "u", embedder=EMBEDDER)
    lt.save_many([{"content": " ".join(rng.choice(WORDS) for _ in range(6))} for _ in range(600)])
    assert lt.flush_embeddings(timeout=120)
    for query in ("jazz piano", "coffee market", "train to berlin"):
        exact = vector_scores(lt, query, 10**9)
        approx = vector_scores(lt, query, 200)
        index = index_cache.scope_cache(engine, "u").vector_index(EMBEDDER.model_id, EMBEDDER.dim)
        assert index.quantised == 4
        shared = set(exact) & set(approx)
        assert len(shared) >= 20
        for entry_id in shared:  # 4-bit cosines are off by ~0.005: these are the float ones
            assert approx[entry_id] == pytest.approx(exact[entry_id], abs=1e-5), (query, entry_id)


@pytest.mark.parametrize("dim", [384, 10])  # 10: base64 with padding, decoded one by one
def test_the_reader_takes_only_the_vector_of_the_cached_text_and_model(engine: Engine, dim: int) -> None:
    keys = ScopeKeys.of(engine, "r")
    cache = ScopeCache()
    rows = np.random.default_rng(5).normal(size=(6, dim)).astype(np.float32)
    cache.texts = {f"e{n}": f"text {n}" for n in range(6)}
    # the vectors the cache took (released: the index holds them), each made from its entry's text
    cache.vectors = {
        f"e{n}": StoredVector("m" if n != 3 else "other", dim, text_hash(f"text {n}"), np.zeros((0, dim)))
        for n in range(6)
    }
    engine.hset(
        keys.vectors,
        {
            "e0": encode_vector("m", "text 0", rows[0]),  # the writer's own form
            "e1": json.dumps(json.loads(encode_vector("m", "text 1", rows[1])), indent=1),  # spaced out
            "e2": encode_vector("m", "text 2, since changed", rows[2]),  # made since, from a newer text
            "e3": encode_vector("other", "text 3", rows[3]),  # another model
            "e4": encode_vector("m", "text 4", rows[4])[:-9] + '!!!!!!!"}',  # damaged base64
            "gone": encode_vector("m", "text gone", rows[5]),  # not in the cache
        },
    )
    before = engine.hgetall(keys.vectors)
    read = reader(engine, keys, cache, "m", dim)
    got, ok = read(["e0", "e1", "e2", "e3", "e4", "e5", "gone", "e0"])
    assert ok.tolist() == [True, True, False, False, False, False, False, True]
    expected = unit_rows(rows[[0, 1, 0]])
    assert np.allclose(got[ok], expected, atol=1e-7)
    assert not got[~ok].any()
    assert reader(engine, keys, cache, "m", dim + 1)(["e0"])[1].tolist() == [False]  # another dimension
    assert read([])[0].shape == (0, dim)
    assert engine.hgetall(keys.vectors) == before  # a read never writes


class HeldRead(ForwardingEngine):
    """The engine, whose first read of ``field_key`` once ``armed`` waits for ``go`` (a slow network)."""

    def __init__(self, inner: Engine, field_key: str) -> None:
        super().__init__(inner)
        self.field_key = field_key
        self.armed, self.entered, self.go = threading.Event(), threading.Event(), threading.Event()

    def hmget(self, key: str, fields: Sequence[str]) -> list[str | None]:
        if key == self.field_key and self.armed.is_set():
            self.armed.clear()
            self.entered.set()
            self.go.wait(120)
        return super().hmget(key, fields)


def test_a_search_reading_its_exact_vectors_does_not_hold_up_another(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph, "ANN_FROM", 200)
    rng = random.Random(4)
    writer = LongTermMemory(engine, "c", embedder=EMBEDDER)
    writer.save_many([{"content": " ".join(rng.choice(WORDS) for _ in range(6))} for _ in range(400)])
    assert writer.flush_embeddings(timeout=120)
    held = HeldRead(engine, ScopeKeys.of(engine, "c").vectors)
    lt = LongTermMemory(held, "c", embedder=EMBEDDER)
    expected = [(h.entry.id, h.score, h.vector) for h in lt.search("jazz piano", limit=20)]
    assert index_cache.scope_cache(engine, "c").anns  # graph-backed: the exact pass reads the engine
    found: dict[str, list[tuple[str, float, float | None]]] = {}

    def search(name: str, query: str) -> None:
        found[name] = [(h.entry.id, h.score, h.vector) for h in lt.search(query, limit=20)]

    held.armed.set()
    first = threading.Thread(target=search, args=("first", "jazz piano"))
    first.start()
    try:
        assert held.entered.wait(60)  # the first search is inside its exact read
        second = threading.Thread(target=search, args=("second", "coffee market"))
        second.start()
        second.join(60)  # waits for the first's read only if that read holds the scope's lock
        assert not second.is_alive() and found["second"]
        assert "first" not in found
    finally:
        held.go.set()
        first.join(60)
    assert found["first"] == expected  # the read outside the lock changes no result


def test_a_scope_changed_during_the_exact_read_is_searched_again_as_it_is_now(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph, "ANN_FROM", 200)
    rng = random.Random(5)
    writer = LongTermMemory(engine, "d", embedder=EMBEDDER)
    writer.save_many([{"content": " ".join(rng.choice(WORDS) for _ in range(6))} for _ in range(300)])
    assert writer.flush_embeddings(timeout=120)
    held = HeldRead(engine, ScopeKeys.of(engine, "d").vectors)
    lt = LongTermMemory(held, "d", embedder=EMBEDDER)
    before = [h.entry.id for h in lt.search("river hike", limit=10)]
    gone = before[0]

    def deleting(key: str, fields: Sequence[str]) -> list[str | None]:
        held.hmget = ForwardingEngine.hmget.__get__(held)  # type: ignore[method-assign]
        writer.delete(gone)  # meanwhile, with the lock free, the scope changes and another search
        writer.search("market", limit=1)  # brings the cache up to it: the drafted hits are stale
        return engine.hmget(key, fields)

    held.hmget = deleting  # type: ignore[method-assign]
    after = [(h.entry.id, h.score) for h in lt.search("river hike", limit=10)]
    assert gone not in [i for i, _ in after]
    assert after == [(h.entry.id, h.score) for h in lt.search("river hike", limit=10)]


class ReadUnderLock(LongTermMemory):
    """The same searches with the exact read made under the scope cache's lock."""

    def _cached(self, *args: Any, defer: bool = True) -> Any:
        return super()._cached(*args, defer=False)


@pytest.mark.parametrize("profile", ["default", "rocchio"])
def test_the_read_outside_the_lock_gives_the_answers_of_the_read_under_it(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    monkeypatch.setattr(graph, "ANN_FROM", 200)
    rng = random.Random(8)
    writer = LongTermMemory(engine, "e", embedder=EMBEDDER)
    texts = [" ".join(rng.choice(WORDS) for _ in range(6)) for _ in range(300)]
    writer.save_many([{"content": t, "tags": [f"t{n % 3}"]} for n, t in enumerate(texts)])
    assert writer.flush_embeddings(timeout=120)
    outside = LongTermMemory(engine, "e", embedder=EMBEDDER, profile=profile)
    inside = ReadUnderLock(engine, "e", embedder=EMBEDDER, profile=profile)
    for query, options in [
        ("jazz piano", {}),
        ("river hike", {"tags": ["t1"]}),
        ("sister paris", {"limit": 3}),
    ]:
        got = [(h.entry.id, h.score, h.vector) for h in outside.search(query, **options)]
        assert index_cache.scope_cache(engine, "e").anns
        assert got == [(h.entry.id, h.score, h.vector) for h in inside.search(query, **options)]
        assert any(v is not None for _, _, v in got)
