"""One view: ``memstack.open(url)``, the CLI and the keyless server see tenant ``default``; another
tenant and the raw keyspace (the RocketRide node's original layout) are explicit options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import memstack
from memstack.compat.rocketride.store import PersistentMemoryStore
from memstack.doors.cli import app as cli_app
from memstack.doors.server import create_app
from memstack.engines import Engine
from memstack.foundation.errors import InvalidConfiguration, InvalidInput


def _cli(url: str, *args: str) -> Any:
    result = CliRunner().invoke(cli_app, ["--url", url, "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def url(engine: Engine, engine_kind: str, engine_url_for: str) -> str:
    """The URL of the (flushed) engine under test, for processes' own opens."""
    if engine_kind == "memory":
        pytest.skip("a memory:// engine lives in one process: a second open sees nothing")
    return engine_url_for


def test_open_the_cli_and_the_keyless_server_see_one_memory(url: str, engine: Engine) -> None:
    with memstack.open(url, embedder="none") as mem:
        assert mem.tenant == "default"
        mem.long_term("alice").save(content="Alice plays the violin")
        mem.sessions.create("s1")
        mem.sessions.put("s1", "topic", "billing")
    assert {key.split(":", 2)[1] for key in engine.scan("")} == {"default"}  # t:default:… only
    hits = _cli(url, "memories", "search", "--scope", "alice", "violin")["items"]
    assert [h["entry"]["content"] for h in hits] == ["Alice plays the violin"]
    assert _cli(url, "sessions", "get", "s1", "topic")["value"] == "billing"
    with (
        memstack.open(url, tenant=None, embedder="none") as whole,
        TestClient(create_app(whole.engine)) as api,
    ):
        found = api.get("/v1/memories", params={"scope": "alice", "query": "violin"}).json()["items"]
        assert [h["entry"]["content"] for h in found] == ["Alice plays the violin"]
        assert api.post(
            "/v1/memories", params={"scope": "bob"}, json={"content": "Bob plays chess"}
        ).is_success
    with memstack.open(url, embedder="none") as mem:
        assert [h.entry.content for h in mem.long_term("bob").search("chess")] == ["Bob plays chess"]


def test_another_tenant_and_the_raw_keyspace_are_explicit(url: str, engine: Engine) -> None:
    with memstack.open(url, tenant="acme", embedder="none") as acme:
        assert acme.tenant == "acme"
        acme.long_term().save(content="acme fact")
    with memstack.open(url, embedder="none") as default:
        assert default.long_term().entries() == []
    with memstack.open(url, tenant=None, embedder="none") as raw:
        assert raw.tenant is None
        assert any(key.startswith("t:acme:lt:") for key in raw.engine.scan(""))


def test_the_rocketride_node_layout_stays_reachable_raw(url: str, engine: Engine) -> None:
    node = PersistentMemoryStore("sqlite", url=url)
    try:
        node.create_session("desk")
        node.put("desk", "last_answer", "Paris")
    finally:
        node.close()
    assert engine.get("rr:memory:" + engine.tag("desk") + ":last_answer") == '"Paris"'  # the original's keys
    with memstack.open(url, tenant=None, embedder="none") as raw:
        assert raw.sessions.get("desk", "last_answer") == "Paris"
    with memstack.open(url, embedder="none") as default:
        assert not default.sessions.exists("desk")  # the node's data is not tenant default's


def test_a_bad_tenant_is_refused_before_anything_is_opened(tmp_path: Path) -> None:
    target = tmp_path / "never.db"
    with pytest.raises(InvalidInput, match="tenant 'a b'"):
        memstack.open(f"sqlite:///{target}", tenant="a b")
    assert not target.exists()


def test_the_server_refuses_a_view_it_would_prefix_twice() -> None:
    with (
        memstack.open("memory://", embedder="none") as mem,
        pytest.raises(InvalidConfiguration, match="tenant=None"),
    ):
        create_app(mem.engine)
