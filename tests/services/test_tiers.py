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


def test_a_memory_built_on_an_engine_resolves_an_embedder_setting_text(mem: Memory) -> None:
    bm25 = Memory(mem.engine, embedder="none")
    assert bm25.embedder is None
    bm25.long_term("s").save(content="the setting text reached every scope")
    assert [h.entry.content for h in bm25.long_term("s").search("setting")] == [
        "the setting text reached every scope"
    ]
    fake = FakeEmbedder(16)
    assert Memory(mem.engine, embedder=fake).long_term("t").embedder is fake


def test_a_memory_refuses_what_is_not_an_engine_or_an_embedder_when_built(mem: Memory) -> None:
    with pytest.raises(InvalidConfiguration, match=r"engine 'sqlite:///m.db': must be an Engine; open a URL"):
        Memory("sqlite:///m.db")  # type: ignore[arg-type]  # the URL text is the mistake shown
    with pytest.raises(InvalidConfiguration, match="embedder 3: must be an Embedder, a setting text or None"):
        Memory(mem.engine, embedder=3)  # type: ignore[arg-type]  # the wrong type is the point
    with pytest.raises(InvalidConfiguration, match="'bogus': must be one of"):
        Memory(mem.engine, embedder="bogus")
    assert len(mem.long_term("s")) == 0
