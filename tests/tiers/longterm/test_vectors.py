"""Vectors: computed in the background, deleted with their entry, model changes detected."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from memstack.engines import Engine
from memstack.foundation.errors import InvalidConfiguration
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.vectors import decode_vector, encode_vector, rank_by_cosine


class GatedEmbedder(FakeEmbedder):
    """A FakeEmbedder whose background calls wait for a gate (to race a delete)."""

    def __init__(self) -> None:
        super().__init__(dim=32)
        self.entered = threading.Event()
        self.gate = threading.Event()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.entered.set()
        assert self.gate.wait(10)
        return super().embed(texts)


class BrokenEmbedder(FakeEmbedder):
    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise RuntimeError("embedding service down")


def test_payload_round_trip() -> None:
    vector = np.array([0.6, 0.8], dtype=np.float32)
    stored = decode_vector(encode_vector("m", "text", vector))
    assert stored is not None
    assert (stored.model, stored.dim) == ("m", 2)
    assert np.array_equal(stored.vector, vector)
    assert decode_vector("not json") is None
    assert decode_vector('{"m":"m","d":3,"h":"x","v":"AAAAAA=="}') is None  # dim disagrees with data


def test_rank_by_cosine_orders_and_filters() -> None:
    matrix = np.array([[1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32)
    ranked = rank_by_cosine(np.array([0, 2], dtype=np.float32), ["a", "b", "c"], matrix)
    assert [i for i, _ in ranked] == ["b", "c", "a"]
    assert ranked[0][1] == pytest.approx(1.0)
    assert [
        i for i, _ in rank_by_cosine(np.array([0, 1], dtype=np.float32), ["a", "b", "c"], matrix, {"a"})
    ] == ["a"]


def test_vectors_are_computed_in_background_and_used(engine: Engine) -> None:
    lt = LongTermMemory(engine, "v", embedder=FakeEmbedder())
    lt.save(content="The user plays the violin every evening", id="music")
    lt.save(content="Dinner is usually pasta", id="food")
    assert lt.flush_embeddings(10)
    assert set(engine.hkeys(lt.keys.vectors)) == {"music", "food"}
    hits = lt.search("violin")
    assert hits[0].entry.id == "music"
    assert hits[0].sources == ("bm25", "vector")
    assert hits[0].vector is not None
    assert hits[0].vector > 0.3
    # a vector-only hit: "violins" is no BM25 token of the rockbot profile, but the trigrams match
    lt_rb = LongTermMemory(engine, "v", profile="rockbot", embedder=FakeEmbedder())
    vector_only = [h for h in lt_rb.search("violins evenings") if h.entry.id == "music"]
    assert vector_only
    assert "vector" in vector_only[0].sources


def test_vector_is_deleted_with_its_entry_and_never_resurrected(engine: Engine) -> None:
    embedder = GatedEmbedder()
    lt = LongTermMemory(engine, "race", embedder=embedder)
    lt.save(content="a memory deleted while its vector is computed", id="gone")
    assert embedder.entered.wait(10)
    assert lt.delete("gone")
    embedder.gate.set()
    assert lt.flush_embeddings(10)
    assert engine.hget(lt.keys.vectors, "gone") is None
    embedder.gate.set()
    kept = lt.save(content="a memory that stays")
    assert lt.flush_embeddings(10)
    assert engine.hget(lt.keys.vectors, kept.id) is not None
    assert lt.delete(kept.id)
    assert engine.hget(lt.keys.vectors, kept.id) is None


def test_changed_content_drops_the_old_vector_and_computes_a_new_one(engine: Engine) -> None:
    lt = LongTermMemory(engine, "upd", embedder=FakeEmbedder())
    lt.save(content="likes jazz", id="x")
    lt.flush_embeddings(10)
    old = engine.hget(lt.keys.vectors, "x")
    lt.save(content="likes techno", id="x")
    lt.flush_embeddings(10)
    new = engine.hget(lt.keys.vectors, "x")
    assert old is not None
    assert new is not None
    assert new != old


def test_model_change_is_detected_reported_and_reembedded(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    old = LongTermMemory(engine, "model", embedder=FakeEmbedder(dim=64))
    for i in range(3):
        old.save(content=f"garden tomato note {i}", id=f"n{i}")
    old.flush_embeddings(10)
    new = LongTermMemory(engine, "model", embedder=FakeEmbedder(dim=32))
    assert new.stale_vectors() == 3
    assert old.stale_vectors() == 0
    with caplog.at_level(logging.WARNING, logger="memstack.tiers.longterm"):
        hits = new.search("tomato")
        new.search("garden")
    assert [r for r in caplog.records if "reembed" in r.getMessage()] != []
    assert len([r for r in caplog.records if "reembed" in r.getMessage()]) == 1  # once
    assert all(h.vector is None for h in hits)  # stale vectors are not used
    assert new.reembed() == 3
    assert new.stale_vectors() == 0
    assert all(h.vector is not None for h in new.search("tomato"))
    assert new.reembed() == 0


def test_embedding_failure_falls_back_to_bm25(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    lt = LongTermMemory(engine, "broken", embedder=BrokenEmbedder())
    with caplog.at_level(logging.WARNING, logger="memstack.tiers.longterm"):
        lt.save(content="the lighthouse keeper", id="l")
        assert lt.flush_embeddings(10)
        hits = lt.search("lighthouse")
    assert [h.entry.id for h in hits] == ["l"]
    assert hits[0].sources == ("bm25",)
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "BM25" in messages


def test_reembed_needs_an_embedder(engine: Engine) -> None:
    with pytest.raises(InvalidConfiguration):
        LongTermMemory(engine, "none").reembed()
    assert LongTermMemory(engine, "none").stale_vectors() == 0
    assert LongTermMemory(engine, "none").flush_embeddings(0)
