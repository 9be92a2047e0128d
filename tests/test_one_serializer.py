"""One serializer per object: the CLI's ``--json``, HTTP and MCP write the same fields with the same
ISO-8601 ``Z`` times as :mod:`memstack.ops.wire` (issue 16, item 6)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import memstack
from memstack.doors.cli import app as cli_app
from memstack.doors.server import create_app
from memstack.foundation.timefmt import iso_utc
from memstack.ops import wire
from memstack.ops.tools import call_tool
from memstack.tiers.shared.change import MemoryChange
from memstack.tiers.shared.documents import DocumentStore

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
TIME_FIELDS = {"created_at", "updated_at", "stored_at", "expires_at", "timestamp", "at", "undone_at"}
runner = CliRunner()


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'wire.db'}"


@pytest.fixture
def client(url: str) -> Iterator[TestClient]:
    with memstack.open(url, tenant=None) as mem, TestClient(create_app(mem.engine)) as test_client:
        yield test_client


def cli(url: str, *args: str) -> Any:
    result = runner.invoke(cli_app, ["--url", url, "--json", *args])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def times_are_iso(value: Any) -> int:
    """How many time fields ``value`` holds (recursively); fails on one that is not ISO ``Z`` text."""
    found = 0
    if isinstance(value, dict):
        for key, item in value.items():
            if key in TIME_FIELDS and item is not None:
                assert isinstance(item, str) and ISO_Z.match(item), f"{key}={item!r}"
                found += 1
            found += times_are_iso(item)
    elif isinstance(value, list):
        found += sum(times_are_iso(item) for item in value)
    return found


def test_the_time_format_is_checked() -> None:
    assert times_are_iso({"created_at": "2026-11-23T20:16:47.123456Z", "x": [{"at": None}]}) == 1
    for bad in (1795465007.1, "2026-11-23T20:16:47+00:00", "2026-11-23T20:16:47Z"):
        with pytest.raises(AssertionError):
            times_are_iso({"created_at": bad})


def test_long_term_entry_and_hit(url: str, client: TestClient) -> None:
    saved_cli = cli(url, "memories", "save", "Alice plays the violin", "--tags", "music")
    saved_http = client.post("/v1/memories", json={"content": "Bob plays chess", "tags": ["games"]}).json()
    assert set(saved_cli) == set(saved_http)
    assert times_are_iso(saved_cli) == times_are_iso(saved_http) == 1  # updated_at is None until an update
    with memstack.open(url) as mem:
        entry = mem.long_term().get(saved_cli["id"])
        assert entry is not None
        assert wire.memory_json(entry) == saved_cli
    hits_cli = cli(url, "memories", "search", "violin")["items"]
    hits_http = client.get("/v1/memories", params={"query": "violin"}).json()["items"]
    assert hits_cli == hits_http
    assert isinstance(hits_http[0]["sources"], list)
    assert times_are_iso(hits_http) >= 1


def test_conversation_message(url: str, client: TestClient) -> None:
    added = cli(url, "conversations", "add", "c1", "user", "hello")
    thread_http = client.get("/v1/conversations/c1/thread").json()["items"]
    thread_cli = cli(url, "conversations", "thread", "c1")["items"]
    assert thread_http == thread_cli == [added]
    assert times_are_iso(added) == 1


def test_working_entry(url: str, client: TestClient) -> None:
    stored = client.put("/v1/working/notes", params={"namespace": "session/s1"}, json={"value": 1})
    assert stored.status_code == 200, stored.text
    via_http = client.get("/v1/working/notes", params={"namespace": "session/s1"}).json()
    via_cli = cli(url, "working", "get", "notes", "--namespace", "session/s1")
    assert via_cli == via_http
    assert times_are_iso(via_http) == 2


def test_session_history(url: str, client: TestClient) -> None:
    client.post("/v1/sessions", json={"session_id": "s1"})
    assert client.put("/v1/sessions/s1/keys/k", json={"value": 1}).status_code == 200
    via_http = client.get("/v1/sessions/s1/history").json()["entries"]
    via_cli = cli(url, "sessions", "history", "s1")["entries"]
    assert via_cli == via_http
    assert times_are_iso(via_http) >= 1


def test_context_explanation(url: str, client: TestClient) -> None:
    cli(url, "memories", "save", "Alice plays the violin")
    via_cli = cli(url, "context", "violin?", "--session", "s1")  # a dry run: marks nothing injected
    via_http = client.post("/v1/context", json={"session_id": "s1", "message": "violin?"}).json()
    assert via_cli == via_http
    assert via_http["explain"] and set(via_http["explain"][0]) == {"kind", "id", "included", "reason"}


def test_dream_record_on_cli_http_and_mcp(url: str, client: TestClient) -> None:
    for i in range(2):  # ids: a save of content equal to a current entry without one returns that entry
        client.post("/v1/memories", json={"id": f"violin-{i}", "content": "Alice plays the violin"})
    via_http = client.post("/v1/dream/runs", json={"passes": ["dedupe"], "dry_run": True}).json()["items"]
    with memstack.open(url) as mem:
        via_mcp = call_tool(mem, "dream_dry_run", {"passes": ["dedupe"]}).data["items"][0]
    assert set(via_mcp) == set(via_http[0])
    assert via_mcp["retired"] == via_http[0]["retired"]
    assert times_are_iso(via_mcp) >= 2 and times_are_iso(via_http) >= 2
    for i in range(2):
        cli(url, "memories", "save", "Bob plays chess", "--id", f"chess-{i}")
    via_cli = cli(url, "dream", "run", "--pass", "dedupe", "--dry-run")["items"]
    assert set(via_cli[0]) == set(via_http[0])
    assert times_are_iso(via_cli) >= 2


def test_shared_change() -> None:
    change = MemoryChange.from_dict({"key": "k", "value": 1, "timestamp": "2026-01-02T03:04:05+00:00"})
    data = change.to_dict()
    assert times_are_iso(data) == 1
    assert MemoryChange.from_dict(data) == change


def test_api_key(url: str) -> None:
    created = cli(url, "keys", "create", "--tenant", "acme")
    listed = cli(url, "keys", "list")
    assert listed[0]["key_id"] == created["key_id"]
    assert listed[0]["tenants"] == ["acme"]
    assert times_are_iso(listed) == 1


def test_dream_history_is_one_summary_on_cli_http_and_mcp(url: str, client: TestClient) -> None:
    for i in range(2):  # ids: a save of content equal to a current entry without one returns that entry
        client.post("/v1/memories", json={"id": f"violin-{i}", "content": "Alice plays the violin"})
    ran = client.post("/v1/dream/runs", json={"passes": ["dedupe"]}).json()["items"][0]
    via_http = client.get("/v1/dream/records").json()["items"]
    via_cli = cli(url, "dream", "history")["items"]
    with memstack.open(url) as mem:
        mine = mem
        via_mcp = call_tool(mine, "dream_history", {}).data["items"]
        record = memstack.services.dream.Dreamer(mine.long_term()).show(ran["id"])
    assert via_http == via_cli == via_mcp == [wire.dream_summary_json(record)]
    assert via_http[0]["retired_count"] == len(ran["retired"]) >= 1
    assert times_are_iso(via_http) == 1  # at; undone_at is None until an undo


def test_one_dream_record_on_cli_and_http(url: str, client: TestClient) -> None:
    for i in range(2):  # ids: a save of content equal to a current entry without one returns that entry
        client.post("/v1/memories", json={"id": f"violin-{i}", "content": "Alice plays the violin"})
    ran = client.post("/v1/dream/runs", json={"passes": ["dedupe"]}).json()["items"][0]
    via_http = client.get(f"/v1/dream/records/{ran['id']}").json()
    via_cli = cli(url, "dream", "show", ran["id"])
    assert via_http == via_cli == ran
    assert isinstance(via_http["retired"], list) and times_are_iso(via_http) >= 2


def test_shared_document_on_http_and_mcp(url: str, client: TestClient) -> None:
    put = client.put(
        "/v1/shared/kb/documents/readme", json={"content": "Set REDIS_URL.", "metadata": {"v": 1}}
    )
    assert put.status_code == 200, put.text
    via_http = client.get("/v1/shared/kb/documents/readme").json()
    assert via_http == put.json()
    with memstack.open(url) as mem:
        mine = mem
        via_mcp = call_tool(mine, "document_get", {"name": "kb", "key": "readme"}).data
        stored = DocumentStore(mine.engine, "kb").get("readme")
    assert stored is not None
    assert via_http == via_mcp == wire.document_json("kb", stored)
    assert set(via_http) == {"name", "key", "text", "metadata", "created_at", "updated_at"}
    assert times_are_iso(via_http) == 2
    assert via_http["created_at"] == iso_utc(stored["created"] / 1000)


def test_session_history_tool_matches_http(url: str, client: TestClient) -> None:
    client.post("/v1/sessions", json={"session_id": "s1"})
    assert client.put("/v1/sessions/s1/keys/k", json={"value": 1}).status_code == 200
    via_http = client.get("/v1/sessions/s1/history").json()["entries"]
    with memstack.open(url) as mem:
        via_mcp = call_tool(mem, "session_history", {}, session_id="s1").data["entries"]
    assert via_mcp == via_http
    assert times_are_iso(via_mcp) >= 1
