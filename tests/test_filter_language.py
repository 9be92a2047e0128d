"""One filter language on every search surface and engine: long-term memory (its listing and its
ranked search), the LangGraph store and the document store answer the same table alike, refuse the
same bad filters alike, and page with ``offset``; so do the doors (HTTP, the tools). (The language
itself: tests/search/test_filters.py.)"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from memstack import ManualClock, Memory
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import InvalidFilter
from memstack.tiers.shared.documents import DocumentStore

RECORDS: dict[str, dict[str, Any]] = {
    "r1": {"kind": "note", "score": 3, "labels": ["a", "b"], "lang": "en", "nested": {"x": 1}},
    "r2": {"kind": "task", "score": 7.5, "labels": ["b"], "lang": "fr"},
    "r3": {"kind": "note", "score": "high", "flag": True},
    "r4": {"kind": "idea", "score": None, "lang": "en"},
}

TABLE: list[tuple[dict[str, Any], list[str]]] = [
    ({"kind": "note"}, ["r1", "r3"]),
    ({"kind": {"$eq": "note"}}, ["r1", "r3"]),
    ({"kind": {"$ne": "note"}}, ["r2", "r4"]),
    ({"score": {"$gt": 3}}, ["r2"]),
    ({"score": {"$gte": 3}}, ["r1", "r2"]),
    ({"score": {"$lt": 5}}, ["r1"]),
    ({"score": {"$lte": 7.5, "$gt": 0}}, ["r1", "r2"]),
    ({"score": {"$gt": "a"}}, ["r3"]),  # strings order with strings only
    ({"score": 3.0}, ["r1"]),  # 3 == 3.0
    ({"kind": {"$in": ["task", "idea"]}}, ["r2", "r4"]),
    ({"kind": {"$nin": ["task", "idea"]}}, ["r1", "r3"]),
    ({"labels": {"$contains": "b"}}, ["r1", "r2"]),
    ({"labels": {"$contains": ["a", "b"]}}, ["r1"]),
    ({"labels": {"$in": ["a"]}}, ["r1"]),
    ({"labels": ["b"]}, ["r2"]),
    ({"kind": {"$contains": "ot"}}, ["r1", "r3"]),
    ({"lang": None}, ["r3"]),  # a missing field equals null
    ({"score": None}, ["r4"]),
    ({"lang": {"$exists": False}}, ["r3"]),
    ({"score": {"$exists": True}}, ["r1", "r2", "r3", "r4"]),
    ({"nested": {"x": 1}}, ["r1"]),
    ({"nested.x": {"$gte": 1}}, ["r1"]),
    ({"flag": True}, ["r3"]),
    ({"flag": 1}, []),  # true is not 1
    ({"$or": [{"kind": "task"}, {"flag": True}]}, ["r2", "r3"]),
    ({"$and": [{"kind": "note"}, {"$not": {"lang": "en"}}]}, ["r3"]),
    ({"$not": {"labels": {"$contains": "b"}}}, ["r3", "r4"]),
    ({"kind": "note", "lang": "en"}, ["r1"]),
]

BAD: list[tuple[Any, str]] = [
    ({"kind": {"$regex": "no"}}, r"\$regex"),
    ({"$or": []}, r"\$or"),
    ({"a..b": 1}, "a..b"),
    ({"score": {"$in": 3}}, r"score.*\$in"),
    ({"$nope": 1}, r"\$nope"),
    ({"x": {"$exists": 1}}, r"\$exists"),
    ({"score": {"$gt": [1]}}, r"\$gt"),
    (["kind"], "object"),
]

T0 = datetime(2026, 3, 1, tzinfo=UTC)

Search = Callable[[Any], list[str]]


def _surfaces(mem: Memory, clock: ManualClock) -> dict[str, Search]:
    """Each surface filled with RECORDS (as metadata, or as the store's values), and how it searches."""
    from memstack.doors.integrations.langgraph import MemstackStore

    lt = mem.long_term("flt")
    store = MemstackStore(mem)
    docs = DocumentStore(mem.engine, "flt")
    for n, (key, data) in enumerate(RECORDS.items()):
        clock.advance(60)
        lt.save(id=key, content=f"record {key}", metadata=data, created_at=T0.timestamp() + n)
        store.put(("t",), key, data)
        docs.store(key, f"record {key}", data)
    return {
        "long-term listing": lambda f: sorted(h.entry.id for h in lt.search(None, filter=f, limit=50)),
        "long-term ranked": lambda f: sorted(h.entry.id for h in lt.search("record", filter=f, limit=50)),
        "langgraph store": lambda f: sorted(h.key for h in store.search(("t",), filter=f, limit=50)),
        "documents": lambda f: sorted(h["key"] for h in docs.search("record", 50, filter=f)),
    }


def test_every_surface_answers_the_table(mem: Memory, clock: ManualClock) -> None:
    surfaces = _surfaces(mem, clock)
    for flt, expected in TABLE:
        for name, search in surfaces.items():
            assert search(flt) == expected, (name, flt)


def test_every_surface_refuses_the_same_bad_filters(mem: Memory, clock: ManualClock) -> None:
    surfaces = _surfaces(mem, clock)
    for flt, named in BAD:
        for name, search in surfaces.items():
            with pytest.raises(InvalidFilter, match=named):
                search(flt)
            assert isinstance(InvalidFilter(""), ValueError), name


def test_built_in_fields(mem: Memory, clock: ManualClock) -> None:
    from memstack.doors.integrations.langgraph import MemstackStore

    lt = mem.long_term("bi")
    lt.save(id="w1", content="first thing", category="work", tags=["Urgent"], created_at=T0)
    lt.save(
        id="w2",
        content="second thing",
        category="work/reports",
        tags=["later"],
        created_at=T0.timestamp() + 60,
    )
    lt.save(
        id="h1",
        content="third thing",
        category="home",
        metadata={"category": "work"},
        created_at=T0.timestamp() + 120,
    )

    def ids(flt: dict[str, Any]) -> list[str]:
        return sorted(h.entry.id for h in lt.search(None, filter=flt))

    assert ids({"category": "WORK"}) == ["w1", "w2"]  # a category equals its sub-categories
    assert ids({"$category": {"$ne": "work"}}) == ["h1"]
    assert ids({"metadata.category": "work"}) == ["h1"]  # the metadata key of the same name
    assert ids({"tags": "urgent"}) == ["w1"]
    assert ids({"created_at": {"$gte": "2026-03-01T00:01:00Z"}}) == ["h1", "w2"]
    assert ids({"created_at": {"$lt": T0.timestamp() + 60}}) == ["w1"]
    assert ids({"id": {"$in": ["w2", "h1", "nope"]}}) == ["h1", "w2"]
    assert ids({"content": {"$contains": "second"}}) == ["w2"]
    assert ids({"updated_at": {"$exists": True}}) == []
    with pytest.raises(InvalidFilter, match="created_at"):
        lt.search(None, filter={"created_at": {"$gt": "yesterday"}})

    store = MemstackStore(mem)
    store.put(("b",), "k1", {"key": "value's own key"})
    clock.advance(10)
    store.put(("b",), "k2", {"n": 2})
    assert [h.key for h in store.search(("b",), filter={"$key": "k2"})] == ["k2"]
    assert [h.key for h in store.search(("b",), filter={"key": "value's own key"})] == ["k1"]  # the value's
    since = datetime.fromtimestamp(clock.now() - 5, UTC)
    assert [h.key for h in store.search(("b",), filter={"$updated_at": {"$gt": since}})] == ["k2"]

    docs = DocumentStore(mem.engine, "bi")
    docs.store("d1", "alpha text", {"key": "x"})
    clock.advance(10)
    docs.store("d2", "beta text")
    assert [d["key"] for d in docs.search("text", filter={"key": "d2"})] == ["d2"]
    assert [d["key"] for d in docs.search("text", filter={"metadata.key": "x"})] == ["d1"]
    assert [d["key"] for d in docs.search("text", filter={"created": {"$gt": clock.now() - 5}})] == ["d2"]


def test_offset_pages_every_surface(mem: Memory, clock: ManualClock) -> None:
    surfaces = _surfaces(mem, clock)
    del surfaces  # filled; now page through each
    from memstack.doors.integrations.langgraph import MemstackStore

    lt, store, docs = mem.long_term("flt"), MemstackStore(mem), DocumentStore(mem.engine, "flt")
    for pages in (
        [[h.entry.id for h in lt.search("record", limit=2, offset=o)] for o in (0, 2, 4)],
        [[h.entry.id for h in lt.search(None, limit=3, offset=o)] for o in (0, 3)],
        [[h.key for h in store.search(("t",), limit=2, offset=o)] for o in (0, 2, 4)],
        [[d["key"] for d in docs.search("record", 2, offset=o)] for o in (0, 2, 4)],
    ):
        flat = [key for page in pages for key in page]
        assert sorted(flat) == sorted(RECORDS), pages
    with pytest.raises(ValueError, match="offset"):
        lt.search("record", offset=-1)
    with pytest.raises(ValueError, match="offset"):
        docs.search("record", offset=-1)


def test_the_doors_answer_the_table_and_refuse_the_bad_filters(engine: Engine, clock: ManualClock) -> None:
    """HTTP (``?filter=`` as JSON text, a document search body) and the ``document_search`` tool
    pass the language through unchanged: the same table, the same refusals (400 naming the
    operator, never a 500)."""
    from fastapi.testclient import TestClient

    from memstack.doors.server import create_app
    from memstack.ops.tools import call_tool

    mine = Memory(tenant_engine(engine, "default"))  # the keyless server's tenant
    _surfaces(mine, clock)
    with TestClient(create_app(engine)) as client:

        def memories(f: Any) -> Any:
            params = {"scope": "flt", "query": "record", "limit": "50", "filter": json.dumps(f)}
            return client.get("/v1/memories", params=params)

        def documents(f: Any) -> Any:
            return client.post(
                "/v1/shared/flt/documents/search", json={"query": "record", "limit": 50, "filter": f}
            )

        for flt, expected in TABLE:
            assert sorted(h["entry"]["id"] for h in memories(flt).json()["items"]) == expected, flt
            assert sorted(h["key"] for h in documents(flt).json()["items"]) == expected, flt
            found = call_tool(
                mine, "document_search", {"name": "flt", "query": "record", "limit": 50, "filter": flt}
            )
            assert sorted(h["key"] for h in found.data["items"]) == expected, flt
        for flt, named in BAD:
            for reply in (memories(flt), documents(flt)):
                if not isinstance(flt, dict):  # not an object: off the request's schema
                    assert reply.status_code in (400, 422), reply.text
                    continue
                assert reply.status_code == 400, reply.text
                assert reply.json()["error"] == "InvalidFilter" and re.search(named, reply.json()["detail"])
