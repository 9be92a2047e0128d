"""The ``/v1/store`` operations keep LangGraph's semantics, on every engine: they run the very
``MemstackStore`` a Python graph uses, so what one writes the other reads; bad namespaces are
refused with a typed error and change nothing; TTLs follow the engine's clock."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("langgraph")

from fastapi.testclient import TestClient

from memstack import Memory
from memstack.doors.integrations.langgraph import MemstackStore
from memstack.doors.server import create_app
from memstack.foundation.clock import ManualClock
from memstack.foundation.errors import EntryNotFound, InvalidKey, InvalidRequest
from memstack.ops import call, operation


def run(mem: Memory, name: str, **fields: Any) -> Any:
    return call(operation(f"store.{name}"), mem, fields)


def test_put_get_search_namespaces_delete(mem: Memory) -> None:
    run(mem, "put", namespace=["docs", "alice"], key="report", value={"title": "Q3 report", "pages": 12})
    run(mem, "put", namespace=["docs", "bob"], key="memo", value={"title": "Lunch memo", "pages": 1})
    got = run(mem, "get", namespace=["docs", "alice"], key="report")
    assert (got["namespace"], got["key"], got["value"]) == (["docs", "alice"], "report", got["value"])
    assert got["value"] == {"title": "Q3 report", "pages": 12}
    assert got["created_at"].endswith("Z")
    found = run(mem, "search", namespace_prefix=["docs"], filter={"pages": {"$gt": 5}})
    assert [hit["key"] for hit in found["items"]] == ["report"]
    ranked = run(mem, "search", namespace_prefix=["docs"], query="lunch")
    assert ranked["items"][0]["key"] == "memo" and ranked["items"][0]["score"] > 0
    assert run(mem, "namespaces", prefix=["docs"])["namespaces"] == [["docs", "alice"], ["docs", "bob"]]
    assert run(mem, "namespaces", suffix=["bob"])["namespaces"] == [["docs", "bob"]]
    assert run(mem, "namespaces", max_depth=1)["namespaces"] == [["docs"]]
    run(mem, "delete", namespace=["docs", "bob"], key="memo")
    run(mem, "delete", namespace=["docs", "bob"], key="memo")  # nothing there: no error
    with pytest.raises(EntryNotFound):
        run(mem, "get", namespace=["docs", "bob"], key="memo")
    assert run(mem, "namespaces", prefix=["docs"])["namespaces"] == [["docs", "alice"]]


def test_the_python_store_and_the_operations_share_items(mem: Memory) -> None:
    store = MemstackStore(mem)
    store.put(("shared", "ann"), "prefs", {"theme": "dark"})
    assert run(mem, "get", namespace=["shared", "ann"], key="prefs")["value"] == {"theme": "dark"}
    run(mem, "put", namespace=["shared", "ann"], key="seen", value={"by": "http"})
    item = store.get(("shared", "ann"), "seen")
    assert item is not None and item.value == {"by": "http"}


def test_bad_namespaces_and_values_are_refused_and_change_nothing(mem: Memory) -> None:
    for namespace in ([], ["a.b"], ["ok", ""]):
        with pytest.raises(InvalidKey):
            run(mem, "put", namespace=namespace, key="k", value={"v": 1})
    with pytest.raises(InvalidRequest):
        run(mem, "put", namespace=["n"], key="k", value=[1, 2])  # an item is a JSON object
    with pytest.raises(InvalidRequest):
        run(mem, "put", namespace=["n"], key="k", value={"v": 1}, ttl=0)
    with pytest.raises(InvalidRequest):  # more than 100 years would overflow the engines' TTLs
        run(mem, "put", namespace=["n"], key="k", value={"v": 1}, ttl=5e307)
    assert run(mem, "namespaces")["namespaces"] == []


def test_a_ttl_expires_the_item_on_the_engines_clock(mem: Memory, clock: ManualClock) -> None:
    run(mem, "put", namespace=["ttl"], key="short", value={"v": 1}, ttl=5)
    run(mem, "put", namespace=["ttl"], key="kept", value={"v": 2})
    clock.advance(4 * 60)
    assert run(mem, "get", namespace=["ttl"], key="short", refresh_ttl=False)["value"] == {"v": 1}
    clock.advance(2 * 60)
    with pytest.raises(EntryNotFound):
        run(mem, "get", namespace=["ttl"], key="short")
    assert run(mem, "get", namespace=["ttl"], key="kept")["value"] == {"v": 2}


def test_a_read_refreshes_the_ttl_unless_told_not_to(mem: Memory, clock: ManualClock) -> None:
    run(mem, "put", namespace=["ttl"], key="k", value={"v": 1}, ttl=5)
    clock.advance(4 * 60)
    run(mem, "get", namespace=["ttl"], key="k")  # restarts the 5 minutes
    clock.advance(4 * 60)
    assert run(mem, "search", namespace_prefix=["ttl"], refresh_ttl=False)["items"][0]["key"] == "k"
    clock.advance(2 * 60)
    assert run(mem, "search", namespace_prefix=["ttl"])["items"] == []


def test_over_http_errors_are_problems(mem: Memory) -> None:
    with TestClient(create_app(mem.engine, mcp=False)) as client:
        put = client.post("/v1/store/items", json={"namespace": ["a"], "key": "k", "value": {"v": 1}})
        assert put.status_code == 200 and put.json() == {"namespace": ["a"], "key": "k"}
        missing = client.post("/v1/store/items/get", json={"namespace": ["a"], "key": "nope"})
        assert missing.status_code == 404 and missing.json()["error"] == "EntryNotFound"
        bad = client.post("/v1/store/items", json={"namespace": [], "key": "k", "value": {}})
        assert bad.status_code == 400 and bad.json()["error"] == "InvalidKey"
        wrong = client.post("/v1/store/items", json={"namespace": "a", "key": "k", "value": {}})
        assert wrong.status_code == 422
