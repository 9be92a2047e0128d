"""A graph-backed scope quantised to 4 bits goes to 8 once it holds conversation turns."""

from __future__ import annotations

import random

import numpy as np
import pytest

from memstack.engines import Engine
from memstack.index import ann as graph
from memstack.index.codec import unit_rows
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory, index_cache
from memstack.tiers.longterm.layout import ScopeKeys
from memstack.tiers.longterm.provenance import conversation_metadata
from memstack.tiers.longterm.vectors import decode_vector

if not graph.available():
    pytest.skip("usearch is not installed", allow_module_level=True)

WORDS = ["tea", "coffee", "jazz", "piano", "river", "hike", "market", "concert", "sister", "train", "paris"]
EMBEDDER = FakeEmbedder(dim=384)


def test_a_scope_given_turns_after_its_graph_holds_its_vectors_in_8_bits(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph, "ANN_FROM", 200)
    rng = random.Random(6)
    lt = LongTermMemory(engine, "t", embedder=EMBEDDER)
    lt.save_many([{"content": " ".join(rng.choice(WORDS) for _ in range(6))} for _ in range(250)])
    assert lt.flush_embeddings(timeout=120)
    lt.search("jazz piano", limit=5)
    cache = index_cache.scope_cache(engine, "t")
    assert cache.anns  # graph-backed, before any turn: 4 bits, the hits re-scored from the floats
    assert cache.vector_index(EMBEDDER.model_id, EMBEDDER.dim).quantised == 4
    before = engine.hgetall(ScopeKeys.of(engine, "t").vectors)
    for turn, text in enumerate(["I moved to Paris", "Which train did you take?", "The night train"]):
        lt.save(content=text, metadata=conversation_metadata("c1", turn, speaker="Ana"))
    assert lt.flush_embeddings(timeout=60)
    turns = LongTermMemory(engine, "t", embedder=EMBEDDER, profile="conversation")
    hits = turns.search("train to paris", limit=5)  # scores every vector from the index
    assert hits
    index = cache.vector_index(EMBEDDER.model_id, EMBEDDER.dim)
    assert index.quantised == 8
    # every vector within half an 8-bit step of its float: read again from the engine, not the 4-bit rows
    for entry_id in list(before)[:50]:
        stored = decode_vector(before[entry_id])
        assert stored is not None
        exact = unit_rows(stored.vector)[0]
        step = float(np.abs(exact).max()) / 127
        assert np.abs(index.gather([entry_id])[:, 0] - exact).max() <= step / 2 + 1e-6
    after = engine.hgetall(ScopeKeys.of(engine, "t").vectors)
    assert {k: v for k, v in after.items() if k in before} == before  # a read never writes
