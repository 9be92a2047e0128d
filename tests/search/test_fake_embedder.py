"""FakeEmbedder: deterministic, model-free vectors where shared words mean similar vectors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from memstack.foundation.errors import InvalidConfiguration, InvalidInput
from memstack.search import cosine
from memstack.search.embedders import Embedder, FakeEmbedder


def _sim(e: FakeEmbedder, a: str, b: str) -> float:
    va, vb = e.embed([a, b])
    return cosine(va, vb)


def test_shape_dtype_and_unit_rows() -> None:
    e = FakeEmbedder()
    out = e.embed(["hello world", "another text", ""])
    assert out.shape == (3, 64)
    assert out.dtype == np.float32
    assert np.linalg.norm(out[:2], axis=1) == pytest.approx([1.0, 1.0], abs=1e-6)
    assert not out[2].any()  # nothing to embed: a zero row
    assert e.embed([]).shape == (0, 64)
    assert isinstance(e, Embedder)
    assert (e.model_id, e.dim) == ("fake:64", 64)
    assert FakeEmbedder(dim=8).embed(["x"]).shape == (1, 8)


def test_deterministic_across_processes() -> None:
    here = FakeEmbedder().embed(["the quick brown fox"])[0]
    code = (
        "from memstack.search.embedders import FakeEmbedder;"
        "import json; print(json.dumps(FakeEmbedder().embed(['the quick brown fox'])[0].tolist()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert np.array(json.loads(out), dtype=np.float32) == pytest.approx(here)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("What is the capital of France?", "what is the capital of france"),
        ("How do I reset my password?", "How can I reset my password"),
        ("I love jazz concerts", "I loved the jazz concert"),
    ],
)
def test_near_identical_texts_pass_the_cache_threshold(a: str, b: str) -> None:
    assert _sim(FakeEmbedder(), a, b) >= 0.92


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Deploy the service to production", "my cat likes tuna"),
        ("The weather in Paris today", "Quarterly revenue grew by ten percent"),
        ("What is the capital of France?", "What is the capital of Germany?"),
    ],
)
def test_unrelated_texts_are_well_below(a: str, b: str) -> None:
    assert _sim(FakeEmbedder(), a, b) < 0.6


def test_shared_words_score_higher_than_unrelated() -> None:
    e = FakeEmbedder()
    assert _sim(e, "user prefers dark mode", "user prefers light mode") > _sim(
        e, "user prefers dark mode", "deploy on friday"
    )


def test_bad_input() -> None:
    with pytest.raises(InvalidConfiguration, match="dim=0"):
        FakeEmbedder(dim=0)
    with pytest.raises(InvalidInput, match="single str"):
        FakeEmbedder().embed("oops")
    with pytest.raises(InvalidInput, match=r"texts\[1\]"):
        FakeEmbedder().embed(["ok", 5])  # type: ignore[list-item]  # the point of the test
