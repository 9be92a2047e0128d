"""The neighbour table of the vector side: each matrix row's conversation neighbours that have a row,
in turn order, as the threads list them (entries without a vector or without provenance included)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import numpy as np
import pytest

import memstack
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import hybrid
from memstack.tiers.longterm.index_cache import scope_cache
from memstack.tiers.longterm.provenance import conversation_metadata

WHEN = datetime(2024, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize("seed", range(3))
def test_neighbour_rows_are_the_threads_neighbours_that_have_rows(seed: int) -> None:
    rng = random.Random(seed)
    embedder = FakeEmbedder(dim=16)
    with memstack.open("memory://") as mem:
        with_vectors = mem.long_term("s", embedder=embedder)
        without = mem.long_term("s", embedder=None)  # saves no vector
        for n in range(150):
            meta = (
                None if rng.random() < 0.1 else conversation_metadata(f"c{rng.randint(0, 3)}", n, "Ann", WHEN)
            )
            lt = without if rng.random() < 0.2 else with_vectors
            lt.save(id=f"e{n:03d}", content=f"turn {n}", metadata=meta)
        assert with_vectors.flush_embeddings(timeout=30)
        cache = scope_cache(mem.engine, "s")
        with cache.lock:
            cache.refresh(mem.engine, with_vectors.keys)
            ids, _ = hybrid.vector_matrix(cache, embedder)
            row = hybrid.row_index(cache, embedder)
            assert 0 < len(ids) < 150
            for window in (1, 2, 3):
                want = np.full((len(ids), 2 * window), -1, dtype=np.int64)
                for n, entry_id in enumerate(ids):
                    near = [row[i] for i in cache.threads.neighbours(entry_id, window) if i in row]
                    want[n, : len(near)] = near
                assert hybrid.neighbour_rows(cache, embedder, window).tolist() == want.tolist()
