"""``memstack forget`` and ``POST /v1/forget``: the same report as the library, for the caller's
tenant only; bad selectors are typed errors that change nothing."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

import memstack
from memstack.doors.cli import app as cli_app
from memstack.doors.server import create_app
from memstack.engines.prefixed import tenant_engine
from memstack.services.lifecycle import TIERS


def test_cli_and_http_forget_the_tenants_data_with_one_report(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'forget.db'}"
    with memstack.open(url, tenant=None) as whole:
        default = memstack.Memory(tenant_engine(whole.engine, "default"))
        other = memstack.Memory(tenant_engine(whole.engine, "other"))
        for mem in (default, other):
            mem.long_term("alice").save(content="Alice plays the violin")
            mem.sessions.create("s1")
            mem.sessions.put("s1", "k", 1)
        with TestClient(create_app(whole.engine)) as client:
            via_http = client.post("/v1/forget", json={"scope": "alice"})
            assert via_http.status_code == 200, via_http.text
            report = via_http.json()
            assert report["selector"] == {"scope": "alice"} and report["remaining"] == 0
            assert list(report["deleted"]) == list(TIERS) and report["deleted"]["long_term"] >= 1
            bad = client.post("/v1/forget", json={"scope": "alice", "session": "s1"})
            assert bad.status_code == 400 and "exactly one of" in bad.json()["detail"]
            assert client.post("/v1/forget", json={"subjekt": "x"}).status_code == 422
        result = CliRunner().invoke(cli_app, ["--url", url, "--json", "forget", "--session", "s1"])
        assert result.exit_code == 0, result.output
        via_cli = json.loads(result.stdout)
        assert set(via_cli) == set(report) and via_cli["selector"] == {"session": "s1"}
        assert via_cli["remaining"] == 0 and via_cli["deleted"]["sessions"] >= 1
        assert default.long_term("alice").entries() == [] and not default.sessions.exists("s1")
        assert len(other.long_term("alice").entries()) == 1 and other.sessions.exists("s1")
    human = CliRunner().invoke(cli_app, ["--url", url, "forget", "--scope", "alice"])
    assert human.exit_code == 0 and "forgot scope alice: 0 removed, 0 remaining" in human.stdout
    none = CliRunner().invoke(cli_app, ["--url", url, "forget"])
    assert none.exit_code == 2 and "exactly one of" in none.stderr


def test_subject_given_on_writes_over_http_and_the_cli_is_forgotten_everywhere(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'subject.db'}"
    runner = CliRunner()
    for args in (
        ["memories", "save", "Zed likes jazz", "--subject", "zed"],
        ["sessions", "create", "zs", "--subject", "zed"],
        ["sessions", "put", "zp", "k", "1", "--create", "--subject", "zed"],
        ["working", "set", "note", "1", "--namespace", "agent/z", "--subject", "zed"],
        ["conversations", "add", "zc", "user", "hello", "--subject", "zed"],
        ["memories", "save", "Amy likes rock", "--subject", "amy"],
    ):
        result = runner.invoke(cli_app, ["--url", url, *args])
        assert result.exit_code == 0, (args, result.output)
    with memstack.open(url, tenant=None) as whole, TestClient(create_app(whole.engine)) as client:
        assert (
            client.post("/v1/memories", json={"content": "Zed owns a cat", "subject": "zed"}).status_code
            == 201
        )
        assert client.put("/v1/shared/b/keys/z", json={"value": 1, "subject": "zed"}).status_code == 200
        bad = client.post("/v1/memories", json={"content": "x", "subject": "no spaces"})
        assert bad.status_code == 400 and "subject" in bad.json()["detail"]
        report = client.post("/v1/forget", json={"subject": "zed"}).json()
        assert report["remaining"] == 0 and report["deleted"]["long_term"] == 2
        assert report["deleted"]["sessions"] >= 2 and report["deleted"]["conversations"] >= 1
        assert client.get("/v1/sessions/zp").status_code == 404
        assert report["deleted"]["working"] == 1 and report["deleted"]["shared"] == 1
        left = client.get("/v1/memories").json()["items"]
        assert [h["entry"]["content"] for h in left] == ["Amy likes rock"]
    refused = runner.invoke(cli_app, ["--url", url, "sessions", "put", "zq", "k", "1", "--subject", "zed"])
    assert refused.exit_code == 2 and "--create" in refused.output  # a subject belongs to a new session
