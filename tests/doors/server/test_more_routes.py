"""Working, shared, context and tool resources; every one confined to the caller's tenant."""

from __future__ import annotations

import json
import threading

from fastapi.testclient import TestClient

from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.tiers.shared import SharedMemory

NS = {"namespace": "session/s1"}


def test_working_memory_resources(client: TestClient) -> None:
    put = client.put(
        "/v1/working/notes", params=NS, json={"value": {"draft": 1}, "category": "email", "tags": ["x"]}
    )
    assert put.status_code == 200 and put.json()["key"] == "session/s1/notes"
    assert client.get("/v1/working/notes", params=NS).json()["value"] == {"draft": 1}
    assert (
        client.get("/v1/working/session/s1/notes", params={"namespace": "session/other"}).status_code == 200
    )
    assert [e["key"] for e in client.get("/v1/working", params={**NS, "query": "email"}).json()["items"]] == [
        "session/s1/notes"
    ]
    foreign = client.put("/v1/working/session/s2/x", params=NS, json={"value": 1})
    assert foreign.status_code == 400 and foreign.json()["error"] == "InvalidKey"
    assert client.delete("/v1/working/notes", params=NS).json()["deleted"] is True
    assert client.get("/v1/working/notes", params=NS).status_code == 404


def test_working_memory_cap_is_a_429(engine: Engine) -> None:
    from memstack.doors.server import create_app

    with TestClient(create_app(engine)) as client:
        for i in range(50):
            assert client.put(f"/v1/working/k{i}", params=NS, json={"value": i}).status_code == 200
        full = client.put("/v1/working/k50", params=NS, json={"value": 50})
        assert full.status_code == 429 and full.json()["error"] == "NamespaceFull"
        assert client.put("/v1/working/k0", params=NS, json={"value": "again"}).status_code == 200


def test_shared_memory_resources_and_cas(client: TestClient) -> None:
    first = client.put("/v1/shared/team/keys/plan", json={"value": {"step": 1}}).json()
    assert first["version"] == 1
    assert client.get("/v1/shared/team/keys/plan").json()["value"] == {"step": 1}
    ok = client.put("/v1/shared/team/keys/plan", json={"value": {"step": 2}, "version": 1})
    assert ok.status_code == 200 and ok.json()["version"] == 2
    stale = client.put("/v1/shared/team/keys/plan", json={"value": {"step": 3}, "version": 1})
    assert stale.status_code == 409 and stale.json()["error"] == "Conflict"
    assert client.get("/v1/shared/team").json()["snapshot"]["custom"] == {"plan": {"step": 2}}
    assert client.get("/v1/shared/team/keys/missing").status_code == 404
    assert client.delete("/v1/shared/team/keys/plan").json()["previous"] == {"step": 2}


def test_shared_long_poll_wakes_on_write(engine: Engine, client: TestClient) -> None:
    writer = SharedMemory(tenant_engine(engine, "default"), "team")
    timer = threading.Timer(0.3, lambda: writer.set("result", 42))
    timer.start()
    try:
        response = client.get("/v1/shared/team/keys/result", params={"wait": 10})
    finally:
        timer.join()
        writer.close()
    assert response.status_code == 200 and response.json()["value"] == 42


def test_shared_long_poll_times_out_as_408(client: TestClient) -> None:
    response = client.get("/v1/shared/team/keys/never", params={"wait": 0.2})
    assert response.status_code == 408 and response.json()["error"] == "WaitTimeout"


def test_context_and_tools(client: TestClient) -> None:
    saved = client.post(
        "/v1/tools/save_memory",
        json={"session_id": "s1", "arguments": '{"content": "Ada prefers tea", "category": "prefs"}'},
    ).json()["result"]
    assert "Error" not in saved
    client.post(
        "/v1/tools/save_to_working_memory", json={"session_id": "s1", "arguments": {"key": "k", "data": "v"}}
    )
    built = client.post(
        "/v1/context", json={"session_id": "s1", "message": "what does Ada drink? tea?"}
    ).json()
    text = "\n".join(m["content"] for m in built["messages"])
    assert "Ada prefers tea" in text and "session/s1/k" in text
    assert built["messages"][-1] == {"role": "user", "content": "what does Ada drink? tea?"}
    names = [t["function"]["name"] for t in client.get("/v1/tools").json()["tools"]]
    assert "save_memory" in names and "session_put" in names
    nope = client.post("/v1/tools/nope", json={})
    assert nope.status_code == 404 and nope.json()["error"] == "UnknownTool"
    assert nope.json()["detail"].startswith("unknown tool 'nope'")
    bad = client.post("/v1/tools/save_memory", json={"arguments": "{not json"})
    assert bad.status_code == 400 and bad.json()["detail"].startswith(
        "the arguments of 'save_memory' are not"
    )
    put = client.post(
        "/v1/tools/session_put", json={"session_id": "s9", "arguments": {"key": "a", "value": [1]}}
    )
    stored = {"session_id": "s9", "key": "a", "value": [1]}
    assert put.json()["data"] == stored and json.loads(put.json()["result"]) == stored
    got = client.post("/v1/tools/session_get", json={"session_id": "s9", "arguments": {"key": "a"}})
    assert got.json()["data"] == stored


def test_other_tenants_see_nothing(tenant_clients: tuple[TestClient, TestClient]) -> None:
    a, b = tenant_clients
    a.put("/v1/working/notes", params=NS, json={"value": "acme only"})
    a.put("/v1/shared/team/keys/plan", json={"value": "acme plan"})
    a.post(
        "/v1/tools/save_memory", json={"session_id": "s1", "arguments": {"content": "acme secret formula"}}
    )
    assert b.get("/v1/working/notes", params=NS).status_code == 404
    assert b.get("/v1/working", params=NS).json()["items"] == []
    assert b.get("/v1/shared/team/keys/plan").status_code == 404
    assert b.get("/v1/shared/team").json()["snapshot"]["custom"] == {}
    assert b.delete("/v1/shared/team/keys/plan").status_code == 404
    found = b.post(
        "/v1/tools/search_memory", json={"session_id": "s1", "arguments": {"query": "secret formula"}}
    )
    assert "acme" not in found.json()["result"]
    context = b.post("/v1/context", json={"session_id": "s1", "message": "secret formula"}).json()
    assert "acme" not in str(context["messages"])
