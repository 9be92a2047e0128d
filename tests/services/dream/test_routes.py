"""``/v1/dream`` on every engine (and the MCP-facing dream tools)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from memstack.doors.server import create_app
from memstack.engines import Engine

from ._helpers import answer
from ._openai_server import fake_openai


@pytest.fixture
def client(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(engine)) as test_client:
        yield test_client


def _seed(client: TestClient) -> list[str]:
    texts = [
        "Zoe likes hiking in the Alps",
        "zoe likes hiking in the alps!",
        "Zoe reads poetry",
        "Zoe has a bike",
    ]
    return [client.post("/v1/memories?scope=zoe", json={"content": t}).json()["id"] for t in texts]


def test_dedupe_run_history_show_undo(client: TestClient) -> None:
    ids = _seed(client)
    dry = client.post("/v1/dream/runs?scope=zoe", json={"passes": ["dedupe"], "dry_run": True})
    assert dry.status_code == 200 and dry.json()["items"][0]["status"] == "dry-run"
    assert client.get("/v1/dream/records?scope=zoe").json()["items"] == []
    ran = client.post("/v1/dream/runs?scope=zoe", json={"passes": ["dedupe"]}).json()["items"][0]
    assert ran["status"] == "applied" and {e["id"] for e in ran["retired"]} == set(ids[:2])
    assert sorted(ran["created"][0]["source_ids"]) == sorted(ids[:2])
    assert [r["id"] for r in client.get("/v1/dream/records?scope=zoe").json()["items"]] == [ran["id"]]
    assert client.get(f"/v1/dream/records/{ran['id']}?scope=zoe").json()["id"] == ran["id"]
    (gone,) = set(ids[:2]) - {ran["created"][0]["id"]}
    assert client.get(f"/v1/memories/{gone}?scope=zoe").status_code == 404
    undone = client.post(f"/v1/dream/records/{ran['id']}/undo?scope=zoe")
    assert undone.status_code == 200 and sorted(undone.json()["restored"]) == sorted(ids[:2])
    assert client.get(f"/v1/memories/{gone}?scope=zoe").status_code == 200
    again = client.post(f"/v1/dream/records/{ran['id']}/undo?scope=zoe")
    assert again.status_code == 409 and again.json()["error"] == "Conflict"
    assert client.get("/v1/dream/records/dmissing?scope=zoe").status_code == 404
    assert client.post("/v1/dream/runs", json={"passes": ["bogus"]}).status_code == 422


def test_consolidate_refused_by_a_guard_rail_is_409(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _seed(client)
    with fake_openai([answer(ids[:3])]) as server:
        monkeypatch.setenv("MEMSTACK_CHAT_URL", server.url)
        monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "m")
        response = client.post("/v1/dream/runs?scope=zoe", json={"passes": ["consolidate"]})
    assert response.status_code == 409 and response.json()["error"] == "DreamRefused"
    assert client.get("/v1/dream/records?scope=zoe").json()["items"][0]["status"] == "refused"


def test_without_a_model_the_llm_passes_are_a_400(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMSTACK_CHAT_URL", raising=False)
    monkeypatch.delenv("MEMSTACK_CHAT_MODEL", raising=False)
    _seed(client)
    response = client.post("/v1/dream/runs?scope=zoe", json={"passes": ["consolidate"]})
    assert response.status_code == 400 and response.json()["error"] == "InvalidConfiguration"


def test_agent_tools_offer_dry_run_and_history_only(engine: Engine) -> None:
    from memstack import Memory
    from memstack.ops.tools import run_tool, tool_specs

    names = {s["function"]["name"] for s in tool_specs()}
    assert {"dream_dry_run", "dream_history"} <= names
    assert not any(n.startswith("dream_") and n not in {"dream_dry_run", "dream_history"} for n in names)
    mem = Memory(engine)
    memory = mem.long_term("kim")
    memory.save(content="Kim drinks coffee every single morning")
    memory.save(content="kim drinks coffee every single morning.")
    assert json.loads(run_tool(mem, "dream_history", {}, scope="kim")) == {"items": []}
    dry = run_tool(mem, "dream_dry_run", {"passes": ["dedupe"]}, scope="kim")
    assert '"status": "dry-run"' in dry and len(memory) == 2
    assert json.loads(run_tool(mem, "dream_dry_run", {}, scope="other")) == {"items": []}  # dedupe by default
    assert run_tool(mem, "dream_dry_run", {"passes": ["apply"]}, scope="kim").startswith("Error:")
    for applying in ({"dry_run": False}, {"force": True}):  # a dry run stays a dry run
        refused = run_tool(mem, "dream_dry_run", applying, scope="kim")
        assert refused.startswith("Error: invalid arguments for 'dream_dry_run'")
        assert "not an argument of this tool" in refused
    from memstack.services.dream import Dreamer

    Dreamer(memory).dedupe()
    assert '"status": "applied"' in run_tool(mem, "dream_history", {"limit": 5}, scope="kim")


def test_feedback_reaches_the_next_consolidation(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    _seed(client)
    added = client.post(
        "/v1/dream/feedback?scope=zoe", json={"kind": "Correction", "text": "Never guess dates"}
    )
    assert added.status_code == 201 and added.json()["kind"] == "correction"
    assert client.post("/v1/dream/feedback?scope=zoe", json={"kind": "x", "text": "  "}).status_code == 400
    with fake_openai([answer()]) as server:
        monkeypatch.setenv("MEMSTACK_CHAT_URL", server.url)
        monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "m")
        client.post("/v1/dream/runs?scope=zoe", json={"passes": ["consolidate"]})
    assert "- [correction] Never guess dates" in server.requests[0]["messages"][1]["content"]
