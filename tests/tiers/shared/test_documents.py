"""The document store of shared memory (RobotLab's newest version, spec 4 item 34) on every
engine: BM25 without an embedder, embeddings with one; keys, replace, delete, errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memstack import ManualClock
from memstack.engines import Engine
from memstack.foundation.errors import InvalidInput, InvalidKey, InvalidValue
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.shared import DocumentStore, SharedMemory

DOCS = {
    "q4_report": "Q4 revenue came in at 4.2M, up 18% year over year, driven by renewals.",
    "q3_report": "Q3 showed 15% growth, driven by expansion in APAC markets.",
    "readme": "To configure redis, set REDIS_URL before starting the workers.",
}


@pytest.fixture(params=["bm25", "embedding"])
def memory(request: pytest.FixtureRequest, engine: Engine) -> Iterator[SharedMemory]:
    embedder = FakeEmbedder(dim=128) if request.param == "embedding" else None
    with SharedMemory(engine, "docs", enable_cache=False, embedder=embedder) as m:
        for key, text in DOCS.items():
            assert m.store_document(key, text, {"source": key}) is m
        yield m


def test_search_ranks_the_matching_document_first(memory: SharedMemory) -> None:
    [best, *rest] = memory.search_documents("how to configure redis", limit=2)
    assert (best["key"], best["text"], best["metadata"]) == ("readme", DOCS["readme"], {"source": "readme"})
    assert all(best["score"] > r["score"] for r in rest)
    assert memory.search_documents("revenue growth renewals")[0]["key"] == "q4_report"
    assert len(memory.search_documents("driven by", limit=1)) == 1
    assert memory.documents.mode == ("bm25" if memory._embedder is None else "embedding")


def test_keys_replace_delete(memory: SharedMemory, clock: ManualClock) -> None:
    assert memory.document_keys() == ["q3_report", "q4_report", "readme"]
    created = memory.documents.get("readme")
    assert created is not None
    clock.advance(5)
    memory.store_document("readme", "Kubernetes deployment notes for the cluster.")
    replaced = memory.documents.get("readme")
    assert replaced is not None and replaced["created"] == created["created"] < replaced["updated"]
    assert replaced["metadata"] == {}
    assert memory.search_documents("kubernetes deployment cluster")[0]["key"] == "readme"
    assert memory.delete_document("readme") is True
    assert memory.delete_document("readme") is False
    assert memory.document_keys() == ["q3_report", "q4_report"]
    assert all(hit["key"] != "readme" for hit in memory.search_documents("kubernetes redis", limit=5))
    assert memory.documents.get("readme") is None


def test_documents_are_shared_by_name_and_apart_from_keys(engine: Engine, memory: SharedMemory) -> None:
    other = DocumentStore(engine, "docs", embedder=memory._embedder)
    assert other.search("configure redis", limit=1)[0]["key"] == "readme"
    other.store("faq", "Workers restart when REDIS_URL changes.")
    assert "faq" in memory.document_keys()
    assert memory.keys() == []  # documents are not memory keys, and clear leaves them
    memory.clear()
    memory.reset()
    assert len(memory.documents) == 4
    assert DocumentStore(engine, "elsewhere").keys() == []
    assert memory.documents.clear() == 4 and memory.document_keys() == []
    assert memory.search_documents("redis") == []


def test_no_shared_term_means_no_bm25_hit(engine: Engine) -> None:
    store = DocumentStore(engine, "plain")
    store.store("a", "apples and pears")
    assert store.search("volcanoes") == []
    assert store.search("apples")[0]["key"] == "a"


def test_errors(memory: SharedMemory) -> None:
    with pytest.raises(InvalidKey):
        memory.store_document("", "text")
    with pytest.raises(InvalidValue, match="content"):
        memory.store_document("k", 42)  # type: ignore[arg-type]  # the bad value is the point
    with pytest.raises(InvalidValue, match="content"):
        memory.store_document("k", "lone \ud800 surrogate")
    with pytest.raises(InvalidValue, match="metadata"):
        memory.store_document("k", "text", ["not", "a", "dict"])  # type: ignore[arg-type]  # the bad value is the point
    with pytest.raises(InvalidValue, match="metadata"):
        memory.store_document("k", "text", {"s": {1, 2}})
    with pytest.raises(InvalidInput, match="limit"):
        memory.search_documents("q", limit=0)
    with pytest.raises(InvalidInput, match="query"):
        memory.search_documents(None)  # type: ignore[arg-type]  # the bad value is the point
    assert "k" not in memory.document_keys()  # nothing was written
