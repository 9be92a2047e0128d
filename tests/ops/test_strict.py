"""Strict inputs on every door: an unknown field, a value of the wrong JSON type or a coercion is
refused (422 over HTTP, exit 2 on the command line, a tool error over MCP) naming the field, and
nothing is written: the tenant's keyspace is byte-identical afterwards, on every engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from fastapi.testclient import TestClient

from memstack import Memory
from memstack.doors.server import create_app
from memstack.engines import Engine, open_engine
from memstack.engines.prefixed import tenant_engine
from memstack.ops import OPERATIONS, Op
from memstack.services.transfer.dump import dump_lines

from ._doors import McpDoor, http_request
from ._scenarios import SCENARIOS, expand, seed

BODY_OPS = [op for op in OPERATIONS.values() if any(h.has_body for h in op.http)]
QUERY_OPS = [op for op in OPERATIONS.values() if op.http and not op.http[0].has_body]


def keyspace(engine: Engine, tenant: str) -> list[tuple[str, str, str, bool]]:
    """Every key of ``tenant`` with its type, value and whether it expires (not how soon: the
    command line's clock runs)."""
    return [
        (line["key"], line["type"], repr(line["value"]), line["pttl"] is not None)
        for line in dump_lines(tenant_engine(engine, tenant))
    ]


def _request(op: Op[Any], tenant: str, engine: Engine) -> tuple[Any, str, list[tuple[str, str]], Any]:
    args = expand(SCENARIOS[op.name].args, seed(Memory(tenant_engine(engine, tenant))))
    body_binding = next((h for h in op.http if h.has_body), op.http[0])
    body_args = {
        k: v
        for k, v in args.items()
        if k in body_binding.path_fields
        or k in body_binding.query_fields(op.fields)
        or k in body_binding.body_fields(op.fields)
    }
    return http_request(op, body_args)


def test_there_are_bodies_and_queries_to_test() -> None:
    assert len(BODY_OPS) >= 15 and len(QUERY_OPS) >= 20


def test_every_json_body_refuses_an_unknown_field(engine: Engine) -> None:
    with TestClient(create_app(engine, mcp=False)) as client:
        for index, op in enumerate(BODY_OPS):
            # The same request without the extra field is accepted (on a twin tenant)...
            binding, path, query, body = _request(op, f"ok{index}", engine)
            headers = {"X-Memstack-Tenant": f"ok{index}"}
            accepted = client.request(binding.method, path, params=query, json=body, headers=headers)
            assert accepted.status_code == binding.status, (op.name, accepted.text)
            # ...and with it, refused before anything is written.
            tenant = f"t{index}"
            binding, path, query, body = _request(op, tenant, engine)
            before = keyspace(engine, tenant)
            refused = client.request(
                binding.method,
                path,
                params=query,
                json={**(body or {}), "unexpected": 1},
                headers={"X-Memstack-Tenant": tenant},
            )
            assert refused.status_code == 422, (op.name, refused.text)
            problem = (
                "not a field of this request"
                if binding.body_fields(op.fields)
                else "this route takes no body"
            )
            assert refused.json()["errors"] == [{"loc": ["body", "unexpected"], "msg": problem}]
            assert keyspace(engine, tenant) == before, op.name


def test_every_route_refuses_an_unknown_query_parameter(engine: Engine) -> None:
    with TestClient(create_app(engine, mcp=False)) as client:
        for index, op in enumerate([*QUERY_OPS, *BODY_OPS]):
            tenant = f"q{index}"
            binding, path, query, body = _request(op, tenant, engine)
            before = keyspace(engine, tenant)
            refused = client.request(
                binding.method,
                path,
                params=[*query, ("scpoe", "x")],
                json=body,
                headers={"X-Memstack-Tenant": tenant},
            )
            assert refused.status_code == 422, (op.name, refused.text)
            assert refused.json()["detail"] == "query.scpoe: not a parameter of this route"
            assert keyspace(engine, tenant) == before, op.name


REFUSED: list[tuple[str, str, dict[str, str], Any, str]] = [
    # (method, path, query, body, the field named): the cases and their kin.
    ("POST", "/v1/memories", {}, {"scope": "user-bob", "content": "Bob's secret"}, "body.scope"),
    ("POST", "/v1/sessions/s1/keys/n/increment", {}, {"amount": "5"}, "body.amount"),
    ("POST", "/v1/sessions/s1/keys/n/increment", {}, {"amount": True}, "body.amount"),
    ("POST", "/v1/sessions", {}, {"session_id": "s9", "ttl_hours": "2"}, "body.ttl_hours"),
    ("PUT", "/v1/shared/team/keys/plan", {}, {"value": 1, "version": 1.0}, "body.version"),
    ("PUT", "/v1/shared/team/keys/plan", {}, {"value": 1, "version": "1"}, "body.version"),
    ("POST", "/v1/shared/kb/documents/search", {}, {"query": "redis", "limit": "5"}, "body.limit"),
    ("POST", "/v1/dream/runs", {}, {"passes": "dedupe", "dry_run": True}, "body.passes"),
    ("POST", "/v1/dream/runs", {}, {"passes": ["dedupe"], "dry_run": 1}, "body.dry_run"),
    (
        "POST",
        "/v1/context",
        {},
        {"session_id": "s1", "message": "hi", "recall_limit": 2.0},
        "body.recall_limit",
    ),
    ("POST", "/v1/conversations/c1/messages", {}, {"role": "user", "content": 7}, "body.content"),
    ("POST", "/v1/conversations/c1/messages", {}, ["user", "hi"], "body.body"),
    ("GET", "/v1/memories", {"limit": "5.0"}, None, "query.limit"),
    ("GET", "/v1/memories", {"limit": "2", "metadata": "[1]"}, None, "query.metadata"),
    ("GET", "/v1/sessions", {"limit": "0"}, None, "query.limit"),
    ("POST", "/v1/forget", {}, {"subject": "u1", "vacuum": "yes"}, "body.vacuum"),
]


def test_wrong_types_and_coercions_are_refused(engine: Engine) -> None:
    seed(Memory(tenant_engine(engine, "default")))
    before = keyspace(engine, "default")
    with TestClient(create_app(engine, mcp=False)) as client:
        for method, path, query, body, field in REFUSED:
            refused = client.request(method, path, params=query, json=body)
            assert refused.status_code == 422, (method, path, refused.text)
            assert refused.json()["detail"].startswith(field + ":"), refused.json()["detail"]
    assert keyspace(engine, "default") == before


CLI_REFUSED: list[tuple[list[str], str]] = [
    (["sessions", "create", "s9", "--bogus", "x"], "No such option: --bogus"),
    (["sessions", "create", "s9", "--ttl-hours", "two"], "--ttl-hours: 'two' is not a number"),
    (["sessions", "incr", "s1", "n", "true"], "AMOUNT: 'true' is not a number"),
    (["memories", "search", "violin", "--limit", "5.0"], "--limit: '5.0' is not an integer"),
    (["memories", "save", "x", "--metadata", "[1]"], "--metadata: input should be a valid dictionary"),
    (["dream", "run", "--pass", "dream-harder", "--dry-run"], "--pass[0]: input should be"),
    (["shared", "put", "team", "plan", "1", "--version", "x"], "--version: 'x' is not an integer"),
]


@pytest.mark.parametrize(("args", "message"), CLI_REFUSED, ids=[" ".join(a[:2]) for a, _ in CLI_REFUSED])
def test_the_command_line_refuses_with_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    url = f"sqlite:///{tmp_path / 'strict.db'}"
    with open_engine(url) as engine:
        seed(Memory(tenant_engine(engine, "default")))
        before = keyspace(engine, "default")
    result = subprocess.run(
        [sys.executable, "-m", "memstack", "--url", url, *args],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr
    with open_engine(url) as engine:
        assert keyspace(engine, "default") == before


MCP_REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("session_put", {"key": "k", "value": 1, "unexpected": 1}, "unexpected: not an argument of this tool"),
    ("session_history", {"limit": "5"}, "limit: input should be a valid integer"),
    (
        "document_search",
        {"name": "kb", "query": "redis", "limit": True},
        "limit: input should be a valid integer",
    ),
    ("dream_dry_run", {"passes": ["dedupe"], "dry_run": False}, "dry_run: not an argument of this tool"),
    ("save_memory", {"content": "x", "tags": ["a"]}, "tags: input should be a valid string"),
    ("save_to_working_memory", {"key": "k", "data": "v", "ttl_minutes": "5"}, "ttl_minutes: input should be"),
]


@pytest.mark.parametrize(("name", "arguments", "message"), MCP_REFUSED, ids=[m[0] for m in MCP_REFUSED])
def test_mcp_tools_refuse_with_a_tool_error(
    mem: Memory, name: str, arguments: dict[str, Any], message: str
) -> None:
    seed(mem)
    before = list(dump_lines(mem.engine))
    mcp = McpDoor(mem)
    try:
        result = mcp.call(name, {**arguments, "session_id": "s1"})
    finally:
        mcp.close()
    text = "".join(part.text for part in result.content)
    assert result.is_error and message in text, text
    assert result.structured_content["error"] in ("InvalidRequest", "InvalidValue")
    assert list(dump_lines(mem.engine)) == before
    assert json.dumps(result.structured_content)
