"""MemstackStore with LangGraph's ``index`` configuration: what is embedded, how queries rank."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.base import IndexConfig
from langgraph.store.memory import InMemoryStore

from memstack.doors.integrations.langgraph import MemstackStore
from memstack.engines import Engine
from memstack.foundation.errors import InvalidConfiguration, InvalidValue
from memstack.search.embedders import FakeEmbedder, available_local_embedder

_CONCEPTS = {
    "tea": 0, "coffee": 0, "juice": 0, "beverage": 0, "drink": 0,
    "car": 1, "truck": 1, "vehicle": 1, "bike": 1,
    "dog": 2, "cat": 2, "pet": 2, "animal": 2,
}  # fmt: skip


def concept_embed(texts: Sequence[str]) -> list[list[float]]:
    """A tiny deterministic embedding: one axis per concept (drinks, vehicles, animals) + a bias."""
    out = []
    for text in texts:
        vector = [0.0, 0.0, 0.0, 0.1]
        for word in text.lower().replace('"', " ").replace(",", " ").split():
            if word in _CONCEPTS:
                vector[_CONCEPTS[word]] += 1.0
        out.append(vector)
    return out


def _config(**extra: Any) -> IndexConfig:
    return IndexConfig(dims=4, embed=concept_embed, **extra)


def _fill(store: Any) -> None:
    store.put(("m",), "tea", {"text": "green tea every morning"})
    store.put(("m",), "car", {"text": "a red car"})
    store.put(("m",), "dog", {"text": "the dog sleeps"})


def test_query_ranks_semantically(engine: Engine) -> None:
    store = MemstackStore(engine, index=_config())
    _fill(store)
    hits = store.search(("m",), query="beverage")  # no word in common: vectors alone rank
    assert hits[0].key == "tea"
    scores = [h.score for h in hits]
    assert all(s is not None for s in scores) and scores == sorted(scores, reverse=True)  # type: ignore[type-var]


def test_vector_only_ranking_is_langgraphs(engine: Engine) -> None:
    ours, theirs = MemstackStore(engine, index=_config()), InMemoryStore(index=_config())
    _fill(ours)
    _fill(theirs)
    for query in ("beverage", "vehicle", "animal pet"):
        assert [h.key for h in ours.search(("m",), query=query)] == [
            h.key for h in theirs.search(("m",), query=query)
        ]


def test_fused_ranking_fuses_bm25_and_vectors(engine: Engine) -> None:
    store = MemstackStore(engine, index=_config(), ranking="fused")
    _fill(store)
    store.put(("m",), "word", {"text": "beverage list for the party"})  # a BM25 match, few concepts
    hits = store.search(("m",), query="beverage")
    assert {hits[0].key, hits[1].key} == {"word", "tea"}
    assert hits[-1].key in ("car", "dog")


def test_unindexed_items_follow_unscored_and_pass_filters(engine: Engine) -> None:
    store = MemstackStore(engine, index=_config())
    _fill(store)
    store.put(("m",), "plain", {"text": "coffee and juice", "kind": "x"}, index=False)
    hits = store.search(("m",), query="juice")  # a word only the unembedded item holds
    assert [h.key for h in hits][-1] == "plain" and hits[-1].score is None  # not vector-ranked
    assert all(h.score is not None for h in hits[:-1])
    assert [h.key for h in store.search(("m",), filter={"kind": "x"})] == ["plain"]
    fused = MemstackStore(engine, index=_config(), ranking="fused")
    assert fused.search(("m",), query="juice")[0].key == "plain"  # BM25 finds it


def test_scores_are_langgraphs_cosines(engine: Engine) -> None:
    config = _config(fields=["title", "notes[*]"])
    ours, theirs = MemstackStore(engine, index=config), InMemoryStore(index=config)
    values = {
        "a": {"title": "tea", "notes": ["car", "dog"]},
        "b": {"title": "truck", "notes": ["bike"]},
        "c": {"title": "nothing", "notes": []},
        "d": {"title": "cat juice", "notes": ["vehicle", "pet", "drink"]},
    }
    for key, value in values.items():
        ours.put(("s",), key, value)
        theirs.put(("s",), key, value)
    ours.put(("s",), "e", {"title": "tea"}, index=["title"])
    theirs.put(("s",), "e", {"title": "tea"}, index=["title"])
    for query in ("beverage", "vehicle", "animal pet", "nothing at all"):
        mine = [(h.key, h.score) for h in ours.search(("s",), query=query)]
        want = [(h.key, h.score) for h in theirs.search(("s",), query=query)]
        assert [k for k, _ in mine] == [k for k, _ in want], query
        assert [s for _, s in mine] == pytest.approx([s for _, s in want], abs=1e-6), query


def test_ranking_must_be_known_and_cosine_needs_an_index(engine: Engine) -> None:
    with pytest.raises(InvalidConfiguration, match="ranking"):
        MemstackStore(engine, ranking="cosine")
    with pytest.raises(InvalidConfiguration, match="ranking"):
        MemstackStore(engine, index=_config(), ranking="best")
    assert (
        MemstackStore(engine).ranking == "fused"
        and MemstackStore(engine, index=_config()).ranking == "cosine"
    )


def test_fields_choose_what_is_embedded(engine: Engine) -> None:
    store = MemstackStore(engine, index=_config(fields=["title"]))
    store.put(("f",), "a", {"title": "truck", "body": "tea"})
    store.put(("f",), "b", {"title": "coffee", "body": "car"})
    assert store.search(("f",), query="vehicle")[0].key == "a"
    store.put(("f",), "c", {"title": "nothing", "body": "bike"}, index=["body"])  # per-put paths
    store.put(("f",), "d", {"tags": ["cat", "juice"]}, index=["tags[*]"])  # one vector per element
    first, second = store.search(("f",), query="bike")[:2]  # "truck" and "bike": the same concept
    assert (first.key, second.key) == ("a", "c") and first.score == pytest.approx(second.score)
    top = store.search(("f",), query="animal")
    assert top[0].key == "d" and top[0].score is not None


def test_nested_and_indexed_paths(engine: Engine) -> None:
    store = MemstackStore(engine, index=_config(fields=["doc.parts[1]"]))
    store.put(("n",), "x", {"doc": {"parts": ["dog", "tea"]}})
    store.put(("n",), "y", {"doc": {"parts": ["tea", "dog"]}})
    assert store.search(("n",), query="drink")[0].key == "x"


def test_embeddings_objects_and_memstack_embedders(engine: Engine) -> None:
    lc = MemstackStore(engine, index=IndexConfig(dims=16, embed=DeterministicFakeEmbedding(size=16)))
    lc.put(("e1",), "k", {"text": "hello"})
    assert lc.search(("e1",), query="anything")[0].score is not None
    ms = MemstackStore(engine, index=IndexConfig(dims=64, embed=FakeEmbedder(64), fields=["text"]))
    ms.put(("e2",), "a", {"text": "oranges and lemons"})
    ms.put(("e2",), "b", {"text": "bells of saint clement"})
    assert ms.search(("e2",), query="lemons")[0].key == "a"


def test_async_embed_functions(engine: Engine) -> None:
    async def aembed(texts: Sequence[str]) -> list[list[float]]:
        return concept_embed(texts)

    store = MemstackStore(engine, index=IndexConfig(dims=4, embed=aembed))
    _fill(store)
    assert store.search(("m",), query="beverage")[0].key == "tea"

    async def run() -> str:
        await store.aput(("m",), "cat", {"text": "a cat"})
        return (await store.asearch(("m",), query="pet"))[0].key

    assert asyncio.run(run()) in ("cat", "dog")


def test_bad_configurations_are_refused(engine: Engine) -> None:
    with pytest.raises(InvalidConfiguration):
        MemstackStore(engine, index=IndexConfig(dims=4))  # no embed
    with pytest.raises(InvalidConfiguration):
        MemstackStore(engine, index=IndexConfig(dims=0, embed=concept_embed))
    with pytest.raises(InvalidConfiguration):
        MemstackStore(engine, index=IndexConfig(dims=4, embed=concept_embed, fields="text"))  # type: ignore[typeddict-item]
    store = MemstackStore(engine, index=IndexConfig(dims=8, embed=concept_embed))
    with pytest.raises(InvalidValue):
        store.put(("m",), "k", {"text": "tea"})  # 4 dims answered, 8 configured
    assert store.get(("m",), "k") is None


def test_a_failing_query_embedding_falls_back_to_bm25(engine: Engine) -> None:
    def fragile(texts: Sequence[str]) -> list[list[float]]:
        if any("boom" in t for t in texts):
            raise RuntimeError("embedding service down")
        return concept_embed(texts)

    store = MemstackStore(engine, index=IndexConfig(dims=4, embed=fragile))
    _fill(store)
    hits = store.search(("m",), query="boom dog")
    assert hits[0].key == "dog" and hits[0].score is not None
    assert [h.score for h in hits[1:]] == [None, None]  # unscored items still fill the page


def test_abatch_keeps_the_event_loop_running(engine: Engine) -> None:
    ticked = threading.Event()

    def slow_embed(texts: Sequence[str]) -> list[list[float]]:
        # Returns only once the loop has ticked while this call runs: a blocked loop never does.
        assert ticked.wait(timeout=30), "the event loop did not run during the batch"
        return concept_embed(texts)

    store = MemstackStore(engine, index=IndexConfig(dims=4, embed=slow_embed))

    async def run() -> int:
        ticks = 0
        put = asyncio.ensure_future(store.aput(("m",), "k", {"text": "tea"}))
        while not put.done():
            ticks += 1
            if ticks >= 3:
                ticked.set()
            await asyncio.sleep(0)
        await put
        return ticks

    assert asyncio.run(run()) >= 3
    assert store.get(("m",), "k") is not None


def test_local_embedder_ranks_by_meaning(engine: Engine) -> None:
    embedder = available_local_embedder()
    if embedder is None:
        pytest.skip("the local embedder (the embeddings extra) is not installed")
    store = MemstackStore(engine, index={"dims": 384, "embed": embedder, "fields": ["text"]})
    unrelated = [
        "The quarterly report is due on Friday", "My car needs new tyres", "Paris is the capital of France",
        "The cat sleeps on the sofa", "We repainted the kitchen walls", "The train was delayed by an hour",
        "He plays the violin in an orchestra", "Python lists are mutable", "The mountain trail was steep",
        "Our team won the football match", "The printer is out of paper", "She planted tomatoes in spring",
        "The museum opens at nine", "I lost my umbrella yesterday", "The bridge was built in 1890",
        "Interest rates rose again", "The library closes early on Sundays", "A new phone was released",
        "The hotel room had a sea view", "Snow fell all night",
    ]  # fmt: skip
    for n, text in enumerate(unrelated):
        store.put(("lt",), f"u{n}", {"text": text})
    store.put(("lt",), "tea", {"text": "I drink green tea every morning"})
    hits = store.search(("lt",), query="beverage", limit=3)
    assert hits[0].key == "tea"
    assert hits[0].score is not None and not math.isnan(hits[0].score)
