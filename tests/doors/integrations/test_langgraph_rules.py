"""LangGraph's rules as MemstackStore keeps them, in this project's words: namespaces and prefixes,
LangGraph's filter operators, batches of mixed ops, re-embedding, paging, concurrent async ops.
(LangGraph's own store tests run against it with ``bench/langgraph_compat.py``.)"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, PutOp, SearchOp

from memstack.doors.integrations.langgraph import MemstackStore
from memstack.engines import Engine
from memstack.foundation.errors import InvalidFilter
from memstack.search.embedders import FakeEmbedder


def _namespaces(store: MemstackStore, prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
    return {item.namespace for item in store.search(prefix, limit=100)}


@pytest.mark.parametrize("bad", [(), ("",), ("a.b",), ("a", "nul\x00"), ("langgraph", "x"), ("a", 1)])
def test_put_refuses_what_langgraph_refuses(engine: Engine, bad: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidNamespaceError):
        MemstackStore(engine).put(bad, "k", {"v": 1})


def test_the_root_label_rule_is_puts_alone(engine: Engine) -> None:
    store = MemstackStore(engine)
    store.batch([PutOp(("langgraph", "x"), "k", {"v": 1})])  # past the public put, as in LangGraph
    assert [h.key for h in store.search(("langgraph",))] == ["k"]
    with pytest.raises(InvalidNamespaceError):
        store.batch([GetOp(("a.b",), "k")])  # labels are checked on every op
    with pytest.raises(InvalidNamespaceError):
        store.batch([SearchOp(("a", ""), None, 10, 0)])


def test_prefixes_stop_at_label_boundaries(engine: Engine) -> None:
    store = MemstackStore(engine)
    for namespace in [("foo",), ("foo", "child"), ("foobar",), ("Foo",), ("user_1",), ("userX1",), ("a%b",),
                      ("star*",), ("starX",), ("users", "alice"), ("users", "alice\n")]:  # fmt: skip
        store.put(namespace, "k", {"v": 1})
    assert _namespaces(store, ("foo",)) == {("foo",), ("foo", "child")}
    assert _namespaces(store, ("fo",)) == set()
    assert _namespaces(store, ("Foo",)) == {("Foo",)}  # case-sensitive, as get and put
    assert _namespaces(store, ("user_1",)) == {("user_1",)}  # no character is a wildcard
    assert _namespaces(store, ("star*",)) == {("star*",)}
    assert _namespaces(store, ("users", "alice")) == {("users", "alice")}
    assert len(_namespaces(store, ())) == 11  # the empty prefix constrains nothing
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {("users", "alice")}
    assert set(store.list_namespaces(prefix=["star*"], limit=100)) == {("star*",)}
    assert [h.key for h in store.search(["foo", "child"])] == ["k"]  # type: ignore[arg-type]  # a list, as callers pass


def test_langgraphs_filter_operators(engine: Engine) -> None:
    store = MemstackStore(engine)
    store.put(("f",), "a", {"price": 10, "on": True, "tags": ["x"], "user": {"access-level": "admin"}})
    store.put(("f",), "b", {"price": 20, "on": False, "tags": ["x", "y"], "123abc": "ok"})
    store.put(("f",), "c", {"price": -3, "title": "O'Brien's", "access-level": "public"})

    def keys(flt: dict[str, Any]) -> list[str]:
        return [h.key for h in store.search(("f",), filter=flt)]

    assert keys({"price": {"$gt": 5}}) == ["a", "b"]
    assert keys({"price": {"$lt": math.inf}}) == ["a", "b", "c"]
    assert keys({"price": {"$gt": -math.inf, "$lte": 10}}) == ["a", "c"]
    assert keys({"price": {"$eq": math.nan}}) == []
    assert keys({"price": {"$lt": 10**100}}) == ["a", "b", "c"]
    assert keys({"price": {"$ne": 10}}) == ["b", "c"]
    assert keys({"on": True}) == ["a"] and keys({"on": False}) == ["b"]
    assert keys({"tags": ["x"]}) == ["a"]  # a list equals a list
    assert keys({"user": {"access-level": "admin"}}) == ["a"]  # a nested object: its keys
    assert keys({"user.access-level": "admin"}) == ["a"]  # a dotted path
    assert keys({"access-level": "public"}) == ["c"] and keys({"123abc": "ok"}) == ["b"]
    assert keys({"title": "O'Brien's"}) == ["c"] and keys({"title": "x' OR '1'='1"}) == []
    with pytest.raises(InvalidFilter, match="Invalid filter key"):
        keys({"access') = 'public' OR json_extract(value, '$.": 1})  # an empty path segment
    with pytest.raises(ValueError, match=r"\$regex"):
        keys({"price": {"$regex": "1"}})


def test_a_batch_runs_its_ops_in_order(engine: Engine) -> None:
    store = MemstackStore(engine)
    store.put(("t", "foo"), "k1", {"data": "v1"})
    results = store.batch(
        [
            GetOp(("t", "foo"), "k1"),
            PutOp(("t", "bar"), "k2", {"data": "v2"}),
            SearchOp(("t",), {"data": "v2"}, 10, 0),
            ListNamespacesOp(None, None, 10, 0),
            PutOp(("t", "foo"), "k1", None),  # a put of None deletes
            GetOp(("t", "foo"), "k1"),
        ]
    )
    assert results[0] is not None and results[0].value == {"data": "v1"}  # type: ignore[union-attr]
    assert results[1] is None and [h.key for h in results[2]] == ["k2"]  # type: ignore[union-attr]
    assert results[3] == [("t", "bar"), ("t", "foo")] and results[4] is None and results[5] is None


def test_an_update_is_embedded_again_and_pages_hold_every_item_once(engine: Engine) -> None:
    store = MemstackStore(engine, index={"dims": 64, "embed": FakeEmbedder(64), "fields": ["text"]})
    store.put(("v",), "d1", {"text": "zany zebra xerxes"})
    for n in range(2, 6):
        store.put(("v",), f"d{n}", {"text": f"a test document number {n}"})
    before = store.search(("v",), query="zany xerxes")[0]
    assert before.key == "d1"
    store.put(("v",), "d1", {"text": "a test document about dogs"})
    after = next(h for h in store.search(("v",), query="zany xerxes") if h.key == "d1")
    assert after.score is not None and before.score is not None and after.score < before.score
    pages = [store.search(("v",), query="test document", limit=2, offset=n) for n in (0, 2, 4)]
    keys = [h.key for page in pages for h in page]
    assert sorted(keys) == ["d1", "d2", "d3", "d4", "d5"]
    scores = [h.score for page in pages for h in page]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert len(store.search(("v",), query="")) == 5 and len(store.search(("v",), query="test " * 100)) == 5


def test_many_concurrent_async_ops(engine: Engine) -> None:
    store = MemstackStore(engine)

    async def run() -> list[Any]:
        ops = []
        for i in range(40):
            namespace = ("c", str(i % 2))
            ops.append(store.aput(namespace, f"k{i}", {"n": i}))
            ops.append(store.aget(namespace, f"k{i}"))
            ops.append(store.asearch(("c",), filter={"n": {"$gte": 0}}, limit=100))
            ops.append(store.alist_namespaces(prefix=("c",)))
        return await asyncio.gather(*ops)

    asyncio.run(run())
    assert len(store.search(("c",), limit=100)) == 40
    assert store.list_namespaces(prefix=("c",)) == [("c", "0"), ("c", "1")]
