"""The HTTP service basics: health, problems, auth, limits, sessions resources."""

from __future__ import annotations

from fastapi.testclient import TestClient

from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.engines import Engine


def test_health_and_openapi(client: TestClient) -> None:
    assert client.get("/healthz").json()["status"] == "ok"
    spec = client.get("/openapi.json").json()
    assert "/v1/sessions" in spec["paths"]


def test_session_resources(client: TestClient) -> None:
    assert client.post("/v1/sessions", json={"session_id": "s1"}).status_code == 201
    assert client.put("/v1/sessions/s1/keys/topic", json={"value": {"a": [1, "x"]}}).status_code == 200
    assert client.post("/v1/sessions/s1/keys/n/increment", json={"amount": 2}).json()["value"] == 2
    assert client.get("/v1/sessions/s1/keys/topic").json()["value"] == {"a": [1, "x"]}
    assert client.get("/v1/sessions/s1").json() == {
        "session_id": "s1",
        "key_count": 2,
        "values": {"n": 2, "topic": {"a": [1, "x"]}},
    }
    assert [e["op"] for e in client.get("/v1/sessions/s1/history").json()["entries"]] == ["put", "increment"]
    assert client.get("/v1/sessions").json() == {"items": ["s1"], "next_cursor": None}
    assert client.delete("/v1/sessions/s1").json()["cleared"] == ["n", "topic"]


def test_pagination(client: TestClient) -> None:
    for i in range(5):
        client.post("/v1/sessions", json={"session_id": f"s{i}"})
    first = client.get("/v1/sessions", params={"limit": 2}).json()
    assert first == {"items": ["s0", "s1"], "next_cursor": "s1"}
    second = client.get("/v1/sessions", params={"limit": 2, "cursor": "s1"}).json()
    assert second == {"items": ["s2", "s3"], "next_cursor": "s3"}
    assert client.get("/v1/sessions", params={"limit": 2, "cursor": "s3"}).json()["next_cursor"] is None


def test_problems_carry_the_typed_error(client: TestClient) -> None:
    response = client.get("/v1/sessions/nope/keys/k")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["error"] == "SessionNotFound"
    bad = client.post("/v1/sessions", json={"session_id": "bad id"})
    assert bad.status_code == 400 and bad.json()["error"] == "InvalidSessionId"
    assert client.post("/v1/sessions", json={}).status_code == 422
    client.post("/v1/sessions", json={"session_id": "s"})
    client.put("/v1/sessions/s/keys/k", json={"value": "text"})
    nan = client.post("/v1/sessions/s/keys/k/increment", json={"amount": 1})
    assert nan.status_code == 409 and nan.json()["error"] == "NotANumber"
    assert nan.json()["detail"].startswith("cannot increment key 'k' of session 's': stored value")


def test_body_limit(engine: Engine) -> None:
    with TestClient(create_app(engine, ServerSettings(max_body_bytes=100))) as client:
        client.post("/v1/sessions", json={"session_id": "s"})
        response = client.put("/v1/sessions/s/keys/k", json={"value": "x" * 200})
        assert response.status_code == 413
        assert response.json()["title"] == "PayloadTooLarge"


def test_auth_is_required_once_a_key_exists(engine: Engine) -> None:
    with TestClient(create_app(engine)) as client:
        assert client.get("/v1/sessions").status_code == 200
    ApiKeyStore(engine).create(["acme"])
    with TestClient(create_app(engine)) as client:
        assert client.get("/v1/sessions").status_code == 401
        assert client.get("/v1/sessions", headers={"Authorization": "Bearer msk_x_y"}).status_code == 401
        assert client.get("/healthz").status_code == 200


def test_tenants_are_isolated(tenant_clients: tuple[TestClient, TestClient]) -> None:
    a, b = tenant_clients
    assert a.post("/v1/sessions", json={"session_id": "secret"}).status_code == 201
    a.put("/v1/sessions/secret/keys/k", json={"value": 1})
    for path in ["/v1/sessions/secret", "/v1/sessions/secret/keys", "/v1/sessions/secret/keys/k",
                 "/v1/sessions/secret/history"]:  # fmt: skip
        assert b.get(path).status_code == 404, path
    assert b.get("/v1/sessions").json()["items"] == []
    assert b.post("/v1/sessions", json={"session_id": "secret"}).status_code == 201  # no collision
    assert a.get("/v1/sessions/secret/keys/k").json()["value"] == 1
    assert b.get("/v1/sessions", headers={"X-Memstack-Tenant": "acme"}).status_code == 404
