"""``/v1/memories``: save, search with scores, get, delete; tenants isolated."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_memory_resources(client: TestClient) -> None:
    saved = client.post(
        "/v1/memories", json={"content": "Alice lives in Chicago", "category": "people/alice"}
    )
    assert saved.status_code == 201
    entry = saved.json()
    assert len(entry["id"]) == 12 and entry["tags"] == []
    client.post("/v1/memories", json={"content": "Bob likes jazz", "tags": ["music"]})
    hits = client.get("/v1/memories", params={"query": "where does alice live"}).json()["items"]
    assert [h["entry"]["id"] for h in hits] == [entry["id"]]
    assert hits[0]["sources"] == ["bm25"] and hits[0]["score"] > 0
    recent = client.get("/v1/memories").json()["items"]
    assert len(recent) == 2
    assert client.get("/v1/memories", params={"tags": "music"}).json()["items"][0]["entry"]["content"] == (
        "Bob likes jazz"
    )
    assert client.get(f"/v1/memories/{entry['id']}").json()["content"] == "Alice lives in Chicago"
    assert client.get("/v1/memory-categories").json() == {"items": ["people/alice"]}
    assert client.get("/v1/memory-tags").json() == {"items": ["music"]}
    assert (
        client.put(f"/v1/memories/{entry['id']}", json={"content": "Alice moved to Boston"}).status_code
        == 200
    )
    assert client.delete(f"/v1/memories/{entry['id']}").json() == {"id": entry["id"], "deleted": True}
    assert client.get(f"/v1/memories/{entry['id']}").status_code == 404
    assert client.delete(f"/v1/memories/{entry['id']}").status_code == 404


def test_scopes_are_separate(client: TestClient) -> None:
    client.post("/v1/memories", params={"scope": "u1"}, json={"content": "private to u1"})
    assert client.get("/v1/memories", params={"scope": "u2", "query": "private"}).json()["items"] == []


def test_bad_category_is_a_problem(client: TestClient) -> None:
    response = client.post("/v1/memories", json={"content": "x", "category": "../etc"})
    assert response.status_code == 400 and response.json()["error"] == "InvalidCategory"


def test_other_tenants_get_404_and_empty_searches(tenant_clients: tuple[TestClient, TestClient]) -> None:
    a, b = tenant_clients
    entry = a.post("/v1/memories", json={"content": "acme secret plan", "category": "plans"}).json()
    assert b.get(f"/v1/memories/{entry['id']}").status_code == 404
    assert b.delete(f"/v1/memories/{entry['id']}").status_code == 404
    assert b.get("/v1/memories", params={"query": "secret plan"}).json()["items"] == []
    assert b.get("/v1/memories").json()["items"] == []
    assert b.get("/v1/memory-categories").json()["items"] == []
    assert a.get(f"/v1/memories/{entry['id']}").status_code == 200


def test_date_filters_accept_naive_times_as_utc(client: TestClient) -> None:
    client.post("/v1/memories", json={"content": "dated entry"})
    assert client.get("/v1/memories", params={"created_after": "2000-01-01T00:00:00"}).json()["items"]
    assert client.get("/v1/memories", params={"created_before": "2000-01-01T00:00:00Z"}).json()["items"] == []
