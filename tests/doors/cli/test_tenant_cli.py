"""``--tenant``: the CLI sees exactly what the keyless server sees, and nothing of other tenants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memstack.doors.cli import app
from memstack.engines import open_engine
from memstack.engines.prefixed import tenant_engine

runner = CliRunner()


def run(url: str, *args: str, code: int = 0, env: dict[str, str] | None = None) -> str:
    result = runner.invoke(app, ["--url", url, "--json", *args], env=env)
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stdout


def test_cli_writes_are_what_the_keyless_server_reads(shared_url: str) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from memstack.doors.server import create_app

    run(shared_url, "sessions", "put", "s1", "topic", '{"name": "billing"}', "--create")
    saved = json.loads(run(shared_url, "memories", "save", "Alice lives in Chicago", "--scope", "alice"))
    run(shared_url, "working", "set", "draft", "hello", "-n", "session/s1")
    run(shared_url, "conversations", "add", "c1", "user", "hi there")
    with open_engine(shared_url) as engine, TestClient(create_app(engine)) as client:
        assert client.get("/v1/sessions/s1").json()["values"] == {"topic": {"name": "billing"}}
        hits = client.get("/v1/memories", params={"scope": "alice", "query": "chicago"}).json()
        assert [h["entry"] for h in hits["items"]] == [saved]  # one serializer: the same fields
        entries = client.get("/v1/working", params={"namespace": "session/s1"}).json()["items"]
        assert [(e["key"], e["value"]) for e in entries] == [("session/s1/draft", "hello")]
        assert "c1" in client.get("/v1/conversations").json()["items"]
        # ... and the reverse: what the server writes, the CLI reads.
        assert client.post("/v1/sessions", json={"session_id": "s2"}).status_code == 201
        assert client.put("/v1/sessions/s2/keys/k", json={"value": [1, "2"]}).status_code == 200
    assert json.loads(run(shared_url, "sessions", "get", "s2", "k"))["value"] == [1, "2"]
    assert json.loads(run(shared_url, "sessions", "list"))["items"] == ["s1", "s2"]


def test_tenants_are_isolated_and_default_is_the_servers(shared_url: str) -> None:
    run(shared_url, "--tenant", "acme", "sessions", "create", "only-acme")
    run(shared_url, "sessions", "create", "only-default", env={"MEMSTACK_TENANT": "default"})
    assert json.loads(run(shared_url, "sessions", "list"))["items"] == ["only-default"]
    assert json.loads(run(shared_url, "--tenant", "acme", "sessions", "list"))["items"] == ["only-acme"]
    assert json.loads(run(shared_url, "sessions", "list", env={"MEMSTACK_TENANT": "acme"}))["items"] == [
        "only-acme"
    ]
    assert json.loads(run(shared_url, "--tenant", "beta", "sessions", "list"))["items"] == []
    run(shared_url, "--tenant", "beta", "sessions", "get", "only-acme", "k", code=3)
    with open_engine(shared_url) as engine:
        # The storage layer holds each under its tenant's prefix; nothing outside any tenant.
        assert tenant_engine(engine, "acme").exists("rr:memory:__sessions__")
        assert not any(key.startswith("rr:") for key in engine.scan(""))


@pytest.mark.parametrize("tenant", ["a b", "", "x" * 65, "t:evil", "ünï"])
def test_an_invalid_tenant_is_a_usage_error(tmp_path: Path, tenant: str) -> None:
    result = runner.invoke(
        app, ["--url", f"sqlite:///{tmp_path / 'm.db'}", "--tenant", tenant, "sessions", "list"]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("error: BadParameter: Invalid value for --tenant")
    assert not (tmp_path / "m.db").exists()


@pytest.mark.parametrize("command", [["keys", "list"], ["doctor"], ["export", "-"]])
def test_engine_wide_commands_refuse_tenant_but_ignore_the_variable(
    tmp_path: Path, command: list[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    result = runner.invoke(app, ["--url", url, "--tenant", "acme", *command])
    assert result.exit_code == 2
    assert "works on the whole engine" in result.stderr
    assert runner.invoke(app, ["--url", url, *command], env={"MEMSTACK_TENANT": "acme"}).exit_code == 0
