"""MemstackStore behaves as LangGraph's own InMemoryStore, on every engine, and serves a real graph."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError
from langgraph.store.memory import InMemoryStore

from memstack.doors.integrations.langgraph import MemstackStore
from memstack.engines import Engine
from memstack.foundation.clock import ManualClock


def _script(store: BaseStore) -> list[Any]:
    """A sequence of store calls; returns what a user would observe (timestamps left out)."""
    seen: list[Any] = []
    store.put(("users", "alice"), "prefs", {"theme": "dark", "size": 3, "tags": ["a", "b"]})
    store.put(("users", "alice"), "bio", {"text": "loves jazz concerts and hiking", "size": 1})
    store.put(("users", "bob"), "prefs", {"theme": "light", "size": 5, "nested": {"lang": "fr"}})
    store.put(("docs",), "d1", {"text": "the concert was loud"})
    store.put(("users", "alice"), "prefs", {"theme": "dark", "size": 4, "tags": ["a", "b"]})
    item = store.get(("users", "alice"), "prefs")
    seen.append(None if item is None else (item.namespace, item.key, item.value))
    seen.append(store.get(("users", "alice"), "missing"))

    def keys(items: list[Any]) -> list[tuple[tuple[str, ...], str]]:
        return [(i.namespace, i.key) for i in items]

    seen.append(keys(store.search(("users", "alice"))))
    seen.append(sorted(keys(store.search(("users",)))))
    seen.append(sorted(keys(store.search(("users",), filter={"theme": "dark"}))))
    seen.append(sorted(keys(store.search(("users",), filter={"size": {"$gt": 3}}))))
    seen.append(sorted(keys(store.search(("users",), filter={"size": {"$lte": 4, "$ne": 3}}))))
    seen.append(sorted(keys(store.search(("users",), filter={"nested": {"lang": "fr"}}))))
    seen.append(sorted(keys(store.search(("users",), filter={"tags": ["a", "b"]}))))
    seen.append(keys(store.search(("users", "alice"), limit=1, offset=1)))
    seen.append(store.list_namespaces())
    seen.append(store.list_namespaces(prefix=("users",)))
    seen.append(store.list_namespaces(suffix=("alice",)))
    seen.append(store.list_namespaces(max_depth=1))
    seen.append(store.list_namespaces(prefix=("users", "*")))
    store.delete(("users", "bob"), "prefs")
    seen.append(store.get(("users", "bob"), "prefs"))
    seen.append(keys(store.search(("users",), filter={"theme": "light"})))
    return seen


def test_empty_namespaces_are_not_listed(engine: Engine) -> None:
    # As LangGraph's Postgres store (namespaces exist while they hold items); its in-memory store
    # keeps listing a namespace after its last item is deleted.
    store = MemstackStore(engine)
    store.put(("a",), "k", {"v": 1})
    store.put(("b",), "k", {"v": 1})
    store.delete(("a",), "k")
    assert store.list_namespaces() == [("b",)]


def test_same_behaviour_as_langgraph_in_memory_store(engine: Engine) -> None:
    assert _script(MemstackStore(engine)) == _script(InMemoryStore())


def test_query_ranks_by_bm25_and_scores(engine: Engine) -> None:
    store = MemstackStore(engine)
    store.put(("m",), "1", {"text": "I went to a concert last summer"})
    store.put(("m",), "2", {"text": "groceries: milk, eggs"})
    store.put(("m",), "3", {"text": "concert concert tickets for the music festival"})
    hits = store.search(("m",), query="concert music")
    assert [h.key for h in hits] == ["3", "1"]
    assert hits[0].score is not None and hits[0].score > hits[1].score > 0  # type: ignore[operator]


def test_created_at_is_kept_on_update(engine: Engine, clock: ManualClock) -> None:
    store = MemstackStore(engine)
    store.put(("a",), "k", {"v": 1})
    first = store.get(("a",), "k")
    clock.advance(10)
    store.put(("a",), "k", {"v": 2})
    second = store.get(("a",), "k")
    assert first is not None and second is not None
    assert second.created_at == first.created_at < second.updated_at
    assert second.value == {"v": 2}


def test_ttl_expires_items_and_reads_refresh_it(engine: Engine, clock: ManualClock) -> None:
    store = MemstackStore(engine, ttl={"refresh_on_read": True})
    store.put(("a",), "k", {"v": 1}, ttl=1.0)  # minutes
    clock.advance(50)
    assert store.get(("a",), "k") is not None  # refreshes: another full minute from now
    clock.advance(50)
    assert store.get(("a",), "k", refresh_ttl=False) is not None
    clock.advance(11)
    assert store.get(("a",), "k") is None
    assert store.search(("a",)) == []
    assert store.list_namespaces() == []


@pytest.mark.parametrize("bad", [(), ("",), ("a.b",), ("langgraph", "x")])
def test_invalid_namespaces_are_refused(engine: Engine, bad: tuple[str, ...]) -> None:
    with pytest.raises(InvalidNamespaceError):
        MemstackStore(engine).put(bad, "k", {"v": 1})


class _State(TypedDict):
    user: str
    message: str
    reply: str


def test_a_real_graph_remembers_across_runs(engine: Engine) -> None:
    def remember(state: _State, *, store: BaseStore) -> dict[str, str]:
        namespace = ("memories", state["user"])
        if state["message"].startswith("remember "):
            fact = state["message"].removeprefix("remember ")
            store.put(namespace, f"fact-{len(store.search(namespace))}", {"fact": fact})
            return {"reply": f"noted: {fact}"}
        hits = store.search(namespace, query=state["message"], limit=1)
        return {"reply": hits[0].value["fact"] if hits else "I don't know"}

    builder = StateGraph(_State)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    graph = builder.compile(store=MemstackStore(engine))
    graph.invoke({"user": "ann", "message": "remember my dog is called Rex", "reply": ""})
    graph.invoke({"user": "ann", "message": "remember I live in Lyon", "reply": ""})
    assert graph.invoke({"user": "ann", "message": "what is my dog called?", "reply": ""})["reply"] == (
        "my dog is called Rex"
    )
    assert graph.invoke({"user": "bob", "message": "what is my dog called?", "reply": ""})["reply"] == (
        "I don't know"
    )


def test_async_twin(engine: Engine) -> None:
    import asyncio

    store = MemstackStore(engine)

    async def run() -> Any:
        await store.aput(("a",), "k", {"v": 1})
        return await store.aget(("a",), "k")

    item = asyncio.run(run())
    assert item is not None and item.value == {"v": 1}
