"""``POST /v1/memories`` with an id, on every engine: the id is the idempotency key, so a retry is a
no-op and a retry over content written since is refused (409), never an overwrite."""

from __future__ import annotations

from fastapi.testclient import TestClient

from memstack.doors.server import create_app
from memstack.engines import Engine


def test_a_retried_create_is_a_no_op_and_never_overwrites(engine: Engine) -> None:
    with TestClient(create_app(engine, mcp=False)) as client:
        body = {"id": "home", "content": "Ana lives in Porto"}
        first = client.post("/v1/memories?scope=ana", json=body)
        again = client.post("/v1/memories?scope=ana", json=body)
        assert first.status_code == again.status_code == 201 and again.json() == first.json()
        history = client.get("/v1/memories/home/history?scope=ana").json()["items"]
        assert [h["op"] for h in history] == ["create"]
        moved = client.put("/v1/memories/home?scope=ana", json={"content": "Ana lives in Lisbon"})
        assert moved.status_code == 200
        late = client.post("/v1/memories?scope=ana", json=body)  # the retry lands after the update
        assert late.status_code == 409 and late.json()["error"] == "AlreadyExists"
        assert client.get("/v1/memories/home?scope=ana").json()["content"] == "Ana lives in Lisbon"
        same = client.post("/v1/memories?scope=ana", json={"content": "ana lives in lisbon!"})
        assert same.json()["id"] == "home"  # equal words: the current entry, no new one
