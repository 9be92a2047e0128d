"""Memory that changes through the doors, on every engine: ``supersedes``, ``valid_from``,
``expires_at`` / ``ttl`` on save; ``include_history``, ``as_of``, ``include_expired`` on search; the
history of an entry over HTTP, the tools and the command line; the extract pass from the doors
against a loopback chat model; the scheduler's pass list."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient
from typer.testing import CliRunner

import memstack
from memstack import ManualClock, Memory
from memstack.doors.cli import app as cli_app
from memstack.doors.server import create_app
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import InvalidConfiguration
from memstack.foundation.timefmt import iso_utc
from memstack.llm.scripted import ScriptedChatModel
from memstack.services.dream.scheduler import DreamScheduler
from services.dream._openai_server import fake_openai

DAY = 86400.0
QUESTION = "where does the user live"


@pytest.fixture
def client(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(engine, mcp=False)) as test_client:
        yield test_client


def iso(seconds: float) -> str:
    return iso_utc(datetime.fromtimestamp(seconds, UTC))


def contents(client: TestClient, **params: Any) -> list[str]:
    answer = client.get("/v1/memories", params={"scope": "u", "query": QUESTION, **params})
    assert answer.status_code == 200, answer.text
    return [hit["entry"]["content"] for hit in answer.json()["items"]]


def test_lisbon_then_berlin_over_http(client: TestClient, clock: ManualClock) -> None:
    lisbon = client.post("/v1/memories?scope=u", json={"content": "The user lives in Lisbon"}).json()
    assert lisbon["valid_from"] == lisbon["created_at"] and lisbon["valid_to"] is None
    assert lisbon["superseded_by"] is None and lisbon["expires_at"] is None
    between = clock.now() + DAY
    clock.advance(2 * DAY)
    moved = iso(clock.now() - 0.5 * DAY)
    body = {"content": "The user lives in Berlin", "supersedes": [lisbon["id"]], "valid_from": moved}
    answer = client.post("/v1/memories?scope=u", json=body)
    assert answer.status_code == 201, answer.text
    berlin = answer.json()
    assert berlin["valid_from"] == moved and berlin["created_at"] == iso(clock.now())
    assert contents(client) == ["The user lives in Berlin"]
    both = client.get("/v1/memories", params={"scope": "u", "query": QUESTION, "include_history": "true"})
    old = next(h["entry"] for h in both.json()["items"] if h["entry"]["id"] == lisbon["id"])
    assert len(both.json()["items"]) == 2
    assert old["valid_to"] == berlin["valid_from"] and old["superseded_by"] == berlin["id"]
    assert contents(client, as_of=iso(between)) == ["The user lives in Lisbon"]
    history = client.get(f"/v1/memories/{lisbon['id']}/history?scope=u").json()["items"]
    assert [(c["op"], c["actor"]) for c in history] == [("create", "api"), ("supersede", "api")]
    assert history[1]["old"]["valid_to"] is None and history[1]["new"]["superseded_by"] == berlin["id"]
    assert history[1]["related_ids"] == [berlin["id"]]
    created = client.get(f"/v1/memories/{berlin['id']}/history?scope=u").json()["items"]
    assert [(c["op"], c["related_ids"]) for c in created] == [("create", [lisbon["id"]])]
    # an entry superseded already, an id the scope lacks: refused, nothing saved
    again = client.post("/v1/memories?scope=u", json={"content": "Paris", "supersedes": [lisbon["id"]]})
    assert again.status_code == 409, again.text
    ghost = client.post("/v1/memories?scope=u", json={"content": "Rome", "supersedes": "ghost"})
    assert ghost.status_code == 404, ghost.text
    assert len(client.get("/v1/memories?scope=u&include_history=true").json()["items"]) == 2
    assert client.get("/v1/memories/ghost/history?scope=u").json() == {"items": []}


def test_expiry_over_http(client: TestClient, clock: ManualClock) -> None:
    code = client.post("/v1/memories?scope=u", json={"content": "The door code is 4321", "ttl": 60}).json()
    assert datetime.fromisoformat(code["expires_at"]).timestamp() == pytest.approx(clock.now() + 60)
    both = client.post(
        "/v1/memories?scope=u", json={"content": "x", "ttl": 5, "expires_at": iso(clock.now() + 9)}
    )
    assert both.status_code == 400 and "ttl" in both.text
    past = client.post("/v1/memories?scope=u", json={"content": "x", "expires_at": iso(clock.now() - 9)})
    assert past.status_code == 400
    zero = client.post("/v1/memories?scope=u", json={"content": "x", "ttl": 0})  # the tier's rule: a 400
    assert zero.status_code == 400 and zero.json()["detail"].startswith("ttl 0: must be a number of seconds")
    clock.advance(61)
    assert client.get("/v1/memories?scope=u&query=door code").json()["items"] == []
    audit = client.get("/v1/memories?scope=u&query=door code&include_expired=true").json()["items"]
    assert [h["entry"]["id"] for h in audit] == [code["id"]]


def test_the_tools_supersede_and_update_with_their_actor(engine: Engine, client: TestClient) -> None:
    mem = Memory(tenant_engine(engine, "default"))  # the keyless server's tenant
    tea = mem.long_term("u").save(content="The user drinks green tea")

    def tool(name: str, **arguments: Any) -> dict[str, Any]:
        answer = client.post(f"/v1/tools/{name}", json={"arguments": arguments, "scope": "u"})
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    said = tool("save_memory", content="The user drinks black coffee now", supersedes=tea.id)
    assert said["result"].startswith("Memory saved with id")
    history = tool("memory_history", id=tea.id)["data"]["items"]
    assert [(c["op"], c["actor"]) for c in history] == [("create", "api"), ("supersede", "tool")]
    assert tool("update_memory", id=tea.id, content="The user drank green tea")["result"] == (
        f"Memory '{tea.id}' updated."
    )
    stored = mem.long_term("u").get(tea.id)
    assert stored is not None and stored.content == "The user drank green tea"
    assert stored.superseded_by is not None  # an update keeps the supersession
    assert [c.op for c in mem.long_term("u").history(tea.id)] == ["create", "supersede", "update"]
    ghost = client.post("/v1/tools/save_memory", json={"arguments": {"content": "x", "supersedes": "ghost"}})
    assert ghost.status_code == 404
    assert ghost.json()["detail"].count("save_memory failed:") == 1  # worded once, by one door
    missing = client.post("/v1/tools/update_memory", json={"arguments": {"id": "nope", "content": "x"}})
    assert missing.status_code == 404 and "No memory entry found" in missing.text


def run(url: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli_app, ["--url", url, *args])
    assert result.exit_code == code, result.output
    return result.output


def test_the_command_line_saves_searches_and_extracts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    lisbon = json.loads(run(url, "--json", "memories", "save", "The user lives in Lisbon", "--scope", "u"))
    berlin = json.loads(
        run(
            url,
            "--json",
            "memories",
            "save",
            "The user lives in Berlin",
            "--scope",
            "u",
            "--supersedes",
            lisbon["id"],
        )
    )
    found = json.loads(run(url, "--json", "memories", "search", QUESTION, "--scope", "u"))["items"]
    assert [h["entry"]["id"] for h in found] == [berlin["id"]]
    found = json.loads(
        run(url, "--json", "memories", "search", QUESTION, "--scope", "u", "--include-history")
    )
    assert {h["entry"]["id"] for h in found["items"]} == {lisbon["id"], berlin["id"]}
    history = json.loads(run(url, "--json", "memories", "history", lisbon["id"], "--scope", "u"))["items"]
    assert [c["op"] for c in history] == ["create", "supersede"]
    with memstack.open(url) as mem:
        mem.long_term("u").save(content="The user likes jazz")  # a pass may supersede at most half
        mem.long_term("u").save(content="The user has a cat")
        mem.turns.add("s1", "user", "I moved again, to Madrid", message_id="m1", subject="u")
    facts = json.dumps({"facts": [{"content": "The user lives in Madrid", "sourceIds": ["m1"]}]})
    update = json.dumps({"decisions": [{"fact": 1, "action": "update", "ids": [berlin["id"]]}]})
    monkeypatch.delenv("MEMSTACK_CHAT_URL", raising=False)
    monkeypatch.delenv("MEMSTACK_CHAT_MODEL", raising=False)
    assert "extract need a chat model" in run(
        url, "dream", "run", "--scope", "u", "--pass", "extract", code=2
    )
    with fake_openai([facts, update, facts, update]) as server:
        model = ("--chat-url", server.url, "--model", "m")
        dry = json.loads(
            run(url, "--json", "dream", "run", "--scope", "u", "--pass", "extract", "--dry-run", *model)
        )
        assert dry["items"][0]["status"] == "dry-run"
        assert (
            json.loads(run(url, "--json", "memories", "get", berlin["id"], "--scope", "u"))["valid_to"]
            is None
        )
        ran = json.loads(run(url, "--json", "dream", "run", "--scope", "u", "--pass", "extract", *model))
    (record,) = ran["items"]
    assert record["kind"] == "extract" and record["status"] == "applied"
    assert [e["id"] for e in record["superseded"]] == [berlin["id"]]
    assert record["created"][0]["message_ids"] == ["m1"]
    stored = json.loads(run(url, "--json", "memories", "get", berlin["id"], "--scope", "u"))
    assert stored["superseded_by"] == record["created"][0]["id"]
    run(url, "--json", "dream", "undo", record["id"], "--scope", "u")
    stored = json.loads(run(url, "--json", "memories", "get", berlin["id"], "--scope", "u"))
    assert stored["superseded_by"] is None and stored["valid_to"] is None


def test_the_extract_pass_over_http(
    engine: Engine, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory(tenant_engine(engine, "default"))  # the keyless server's tenant
    for n, fact in enumerate(("The user lives in Lisbon", "The user likes jazz", "The user has a cat")):
        mem.long_term("u").save(id=("lisbon", "jazz", "cat")[n], content=fact)
    mem.turns.add("s1", "user", "We moved to Berlin", message_id="m1", subject="u")
    facts = json.dumps({"facts": [{"content": "The user lives in Berlin", "sourceIds": ["m1"]}]})
    update = json.dumps({"decisions": [{"fact": 1, "action": "update", "ids": ["lisbon"]}]})
    with fake_openai([facts, update]) as server:
        monkeypatch.setenv("MEMSTACK_CHAT_URL", server.url)
        monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "m")
        answer = client.post("/v1/dream/runs?scope=u", json={"passes": ["extract"]})
    assert answer.status_code == 200, answer.text
    (record,) = answer.json()["items"]
    assert record["status"] == "applied" and record["superseded"][0]["id"] == "lisbon"
    found = contents(client)
    assert found[0] == "The user lives in Berlin" and "The user lives in Lisbon" not in found
    summary = client.get("/v1/dream/records?scope=u").json()["items"][0]
    assert (summary["kind"], summary["created_count"], summary["superseded_count"]) == ("extract", 1, 1)


def test_the_scheduler_refuses_a_bad_pass_list(mem: Memory) -> None:
    with pytest.raises(InvalidConfiguration, match="dream-harder"):
        DreamScheduler(mem, 60, passes=["dream-harder"])
    with pytest.raises(InvalidConfiguration, match="needs a chat model"):
        DreamScheduler(mem, 60, passes=["extract"])
    assert DreamScheduler(mem, 60, model=ScriptedChatModel([]), passes=["extract"]).passes == ("extract",)
