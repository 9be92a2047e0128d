"""LangMem's memory tools on MemstackStore: ``create_manage_memory_tool`` and
``create_search_memory_tool``, invoked directly (no LLM), sync and async, on every engine."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest

pytest.importorskip("langmem")

from langmem import create_manage_memory_tool, create_search_memory_tool

from memstack.doors.integrations.langgraph import MemstackStore
from memstack.engines import Engine
from memstack.search.embedders import FakeEmbedder

NAMESPACE = ("memories", "ann")


def _found(search: Any, **args: Any) -> list[dict[str, Any]]:
    found = json.loads(search.invoke(args))
    assert isinstance(found, list)
    return found


@pytest.mark.parametrize("indexed", [True, False], ids=["index", "no-index"])
def test_manage_and_search_tools(engine: Engine, indexed: bool) -> None:
    index = {"dims": 64, "embed": FakeEmbedder(64)} if indexed else None
    store = MemstackStore(engine, index=index)  # type: ignore[arg-type]
    manage = create_manage_memory_tool(NAMESPACE, store=store)
    search = create_search_memory_tool(NAMESPACE, store=store)
    created = manage.invoke({"content": "Ann prefers green tea in the morning", "action": "create"})
    assert created.startswith("created memory ")
    tea = created.removeprefix("created memory ")
    manage.invoke({"content": "Ann lives in Lyon"})
    hits = _found(search, query="green tea", limit=1)
    assert [(h["key"], h["value"]) for h in hits] == [
        (tea, {"content": "Ann prefers green tea in the morning"})
    ]
    assert hits[0]["namespace"] == list(NAMESPACE) and hits[0]["score"] is not None
    assert len(_found(search, query="Ann", limit=10)) == 2
    assert len(_found(search, query="Ann", limit=10, offset=1)) == 1
    lyon = _found(search, query="Lyon", filter={"content": "Ann lives in Lyon"})
    assert [h["value"]["content"] for h in lyon] == ["Ann lives in Lyon"]

    assert manage.invoke({"content": "Ann now prefers coffee", "action": "update", "id": tea}) == (
        f"updated memory {tea}"
    )
    item = store.get(NAMESPACE, tea)
    assert item is not None and item.value == {"content": "Ann now prefers coffee"}
    assert manage.invoke({"action": "delete", "id": tea}) == f"Deleted memory {tea}"
    assert store.get(NAMESPACE, tea) is None
    assert [h["value"]["content"] for h in _found(search, query="coffee")] == ["Ann lives in Lyon"] * (
        1 if indexed else 0
    )  # a vector search ranks every item; BM25 finds none left holding "coffee"


def test_the_tools_async_faces(engine: Engine) -> None:
    store = MemstackStore(engine, index={"dims": 64, "embed": FakeEmbedder(64)})
    manage = create_manage_memory_tool(NAMESPACE, store=store, actions_permitted=("create", "update"))
    search = create_search_memory_tool(NAMESPACE, store=store, response_format="content_and_artifact")

    async def run() -> Any:
        await manage.ainvoke({"content": "Ann's dog is called Rex"})
        await manage.ainvoke({"content": "Ann plays the violin"})
        call = {"type": "tool_call", "id": "1", "name": search.name, "args": {"query": "dog Rex", "limit": 1}}
        return await search.ainvoke(call)

    message = asyncio.run(run())
    [item] = message.artifact
    assert item.value == {"content": "Ann's dog is called Rex"} and uuid.UUID(item.key)
    assert json.loads(message.content)[0]["key"] == item.key
    with pytest.raises(Exception, match="delete"):
        manage.invoke({"action": "delete", "id": item.key})  # not permitted by this tool
