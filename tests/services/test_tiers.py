"""The tiers a :class:`Memory` opens: options given to ``long_term`` are resolved like ``open``'s."""

from __future__ import annotations

import pytest

from memstack import Memory
from memstack.foundation.errors import InvalidConfiguration
from memstack.search.embedders.fake import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory


def test_a_setting_text_names_the_embedder_of_a_scope(mem: Memory) -> None:
    assert mem.long_term("bm25", embedder="none").embedder is None
    fake = FakeEmbedder(16)
    assert mem.long_term("fake", embedder=fake).embedder is fake
    assert mem.long_term("default-embedder", profile="default").embedder is mem.embedder


def test_a_bad_embedder_is_refused_before_anything_is_written(mem: Memory) -> None:
    with pytest.raises(InvalidConfiguration, match="'bogus': must be one of"):
        mem.long_term("s", embedder="bogus")
    with pytest.raises(InvalidConfiguration, match="embedder 3: must be an Embedder or None"):
        LongTermMemory(mem.engine, "s", embedder=3)  # type: ignore[arg-type]  # the wrong type is the point
    assert len(mem.long_term("s")) == 0
