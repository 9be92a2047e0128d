"""``/v1/conversations``: append with branches, thread, history; tenants isolated."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_branches_thread_and_history(client: TestClient) -> None:
    post = lambda body: client.post("/v1/conversations/c1/messages", json=body)  # noqa: E731 - tiny helper
    assert (
        post({"role": "user", "content": "hi", "message_id": "u1", "parent_message_id": None}).status_code
        == 201
    )
    post({"role": "assistant", "content": "hello", "message_id": "a1"})
    post({"role": "user", "content": "tell me a joke", "message_id": "u2"})
    post({"role": "assistant", "content": "joke one", "message_id": "a2"})
    post({"role": "assistant", "content": "joke two", "message_id": "a2b", "parent_message_id": "u2"})
    thread = client.get("/v1/conversations/c1/thread").json()["items"]
    assert [m["message_id"] for m in thread] == ["u1", "a1", "u2", "a2b"]
    old = client.get("/v1/conversations/c1/thread", params={"current_message_id": "a2"}).json()["items"]
    assert [m["message_id"] for m in old] == ["u1", "a1", "u2", "a2"]
    history = client.get("/v1/conversations/c1/history").json()["messages"]
    assert history[0]["role"] == "user"
    assert history[-1]["content"] == "joke two"
    assert client.get("/v1/conversations").json()["items"] == ["c1"]
    assert len(client.get("/v1/conversations/c1/messages").json()["items"]) == 5
    assert client.get("/v1/conversations/c1/messages/a2").json()["content"] == "joke one"
    assert client.delete("/v1/conversations/c1").json()["deleted"] is True
    assert client.get("/v1/conversations/c1/thread").status_code == 404


def test_unknown_parent_is_404(client: TestClient) -> None:
    client.post("/v1/conversations/c1/messages", json={"role": "user", "content": "x"})
    response = client.post(
        "/v1/conversations/c1/messages",
        json={"role": "assistant", "content": "y", "parent_message_id": "nope"},
    )
    assert response.status_code == 404


def test_other_tenants_get_404(tenant_clients: tuple[TestClient, TestClient]) -> None:
    a, b = tenant_clients
    a.post("/v1/conversations/c1/messages", json={"role": "user", "content": "secret", "message_id": "m1"})
    base = "/v1/conversations/c1"
    for path in [f"{base}/thread", f"{base}/history", f"{base}/messages", f"{base}/messages/m1"]:
        assert b.get(path).status_code == 404, path
    assert b.delete("/v1/conversations/c1").status_code == 404
    assert b.get("/v1/conversations").json()["items"] == []
