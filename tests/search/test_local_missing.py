"""Without its packages a local model is reported as unavailable, never as a crash."""

from __future__ import annotations

import pytest

from memstack.foundation.errors import InvalidConfiguration
from memstack.search.embedders import LOCAL_MODELS, LocalEmbedder, LocalModel, available_local_embedder


def test_missing_model_package_means_none(monkeypatch: pytest.MonkeyPatch) -> None:
    ghost = LocalModel(
        name="ghost",
        model_package="memstack_no_such_model_package",
        model_file="model.onnx",
        tokenizer_package="memstack_no_such_tokenizer_package",
        tokenizer_file="tokenizer.json",
        dim=8,
    )
    monkeypatch.setitem(LOCAL_MODELS, "ghost", ghost)
    assert available_local_embedder("ghost") is None
    with pytest.raises(InvalidConfiguration, match=r"memstack\[embeddings\]"):
        LocalEmbedder("ghost")
