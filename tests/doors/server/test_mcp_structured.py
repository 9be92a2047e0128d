"""Every MCP tool answers ``structuredContent`` beside its text: the operation's JSON exactly as HTTP
answers it (``data`` of ``POST /v1/tools/{name}``), or ``{"result": text}`` for the original
systems' text tools; a failure names the same error as HTTP. Checked with the official MCP client
over streamable HTTP (every engine) and over stdio (``memstack serve --stdio``)."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import httpx
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from _serving import serving
from memstack import Memory
from memstack.doors.server import ServerSettings, create_app
from memstack.engines import Engine, open_engine
from memstack.engines.prefixed import tenant_engine
from memstack.ops.tools import TOOL_NAMES

# Every tool once, in an order that gives each one data to act on; "{id}" is a memory of the scope.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("save_memory", {"content": "Ada prefers green tea", "category": "prefs", "tags": "tea"}),
    ("search_memory", {"query": "tea"}),
    ("save_memories", {"items": [{"content": "Ada rides a bike"}, {"content": "Ada reads at night"}]}),
    ("count_memories", {}),
    ("remember", {"user": "ada", "content": "I drink green tea every morning"}),
    ("recall", {"user": "ada", "query": "green tea"}),
    ("migrate_turns", {}),
    ("list_memory_categories", {}),
    ("update_memory", {"id": "{id}", "content": "Ada prefers black tea"}),
    ("memory_history", {"id": "{id}"}),
    ("list_memory_scopes", {}),
    ("save_to_working_memory", {"key": "plan", "data": "step one"}),
    ("get_from_working_memory", {"key": "plan"}),
    ("list_working_memory", {}),
    ("search_working_memory", {"query": "step"}),
    ("list_working_namespaces", {}),
    ("delete_from_working_memory", {"key": "plan"}),
    ("session_put", {"key": "topic", "value": {"name": "billing"}}),
    ("session_get", {"key": "topic"}),
    ("session_history", {}),
    ("list_sessions", {}),
    ("conversation_append", {"conversation_id": "c1", "role": "user", "content": "hello"}),
    ("conversation_history", {"conversation_id": "c1"}),
    ("list_conversations", {}),
    ("cache_store", {"name": "team", "query": "capital of France?", "response": "Paris"}),
    ("cache_lookup", {"name": "team", "query": "capital of France?"}),
    ("cache_stats", {"name": "team"}),
    ("document_store", {"name": "team", "key": "d1", "content": "the plan is to write"}),
    ("document_get", {"name": "team", "key": "d1"}),
    ("document_keys", {"name": "team"}),
    ("document_search", {"name": "team", "query": "plan"}),
    ("document_delete", {"name": "team", "key": "d1"}),
    ("list_shared_boards", {}),
    ("dream_dry_run", {"passes": ["dedupe"]}),
    ("dream_history", {}),
    ("delete_memory", {"id": "{id}"}),
    ("session_get", {"key": "missing"}),  # a failure: the same error on both doors
]
_ID = re.compile(r"\b(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{12,32})\b")


# Conversation provenance in a memory's metadata keeps its stored ISO text (an offset, not "Z").
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")


def _same(value: Any, times: bool) -> Any:
    """``value`` with generated ids as ``ID`` (the two tenants make their own), and with times as
    ``TIME`` when ``times`` (a process of its own runs on the system clock)."""
    if isinstance(value, str):
        value = _ID.sub("ID", value)
        return _TIME.sub("TIME", value) if times else value
    if isinstance(value, list):
        return [_same(v, times) for v in value]
    if isinstance(value, dict):
        return {k: _same(v, times) for k, v in value.items()}
    return value


def _arguments(arguments: dict[str, Any], memory_id: str) -> dict[str, Any]:
    filled = {k: (memory_id if v == "{id}" else v) for k, v in arguments.items()}
    return {**filled, "session_id": "s1"}


def _expected(http: httpx.Response) -> dict[str, Any]:
    body = http.json()
    if http.status_code != 200:
        return {"error": body["error"]}
    return body["data"] if body["data"] is not None else {"result": body["result"]}


def _seed(engine: Engine, tenant: str) -> str:
    memory = Memory(tenant_engine(engine, tenant))
    try:
        return memory.long_term("default").save(content="Ada lives in Lisbon").id
    finally:
        memory.close()


async def _mcp_calls(client: Client, memory_id: str) -> list[Any]:
    return [await client.call_tool(name, _arguments(args, memory_id)) for name, args in CALLS]


def _http_calls(base: str, tenant: str, memory_id: str) -> list[httpx.Response]:
    headers = {"X-Memstack-Tenant": tenant}
    return [
        httpx.post(
            f"{base}/v1/tools/{name}",
            json={
                "session_id": "s1",
                "arguments": {k: v for k, v in _arguments(args, memory_id).items() if k != "session_id"},
            },
            headers=headers,
            timeout=30,
        )
        for name, args in CALLS
    ]


def _compare(mcp: list[Any], http: list[httpx.Response], *, times: bool = False) -> None:
    for (name, _), over_mcp, over_http in zip(CALLS, mcp, http, strict=True):
        expected = _expected(over_http)
        assert over_mcp.structured_content is not None, name
        if "error" in expected:
            assert over_mcp.is_error and over_mcp.structured_content["error"] == expected["error"], name
        else:
            assert not over_mcp.is_error, (name, over_mcp.content)
            assert _same(over_mcp.structured_content, times) == _same(expected, times), name


def test_every_tool_is_called() -> None:
    assert {name for name, _ in CALLS} == set(TOOL_NAMES)


def test_structured_content_is_the_http_json_over_streamable_http(engine: Engine) -> None:
    mcp_id, http_id = _seed(engine, "over-mcp"), _seed(engine, "over-http")
    with serving(create_app(engine, ServerSettings(auth="none"))) as base:

        async def run() -> list[Any]:
            http = create_mcp_http_client(headers={"X-Memstack-Tenant": "over-mcp"})
            async with http, Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
                return await _mcp_calls(client, mcp_id)

        over_mcp = asyncio.run(run())
        over_http = _http_calls(base, "over-http", http_id)
    _compare(over_mcp, over_http)


def test_structured_content_is_the_http_json_over_stdio(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with open_engine(url) as engine:
        stdio_id, http_id = _seed(engine, "default"), _seed(engine, "over-http")
    env = {**os.environ, "MEMSTACK_EMBEDDER": "none", "MEMSTACK_URL": url}
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "memstack", "serve", "--stdio"], env=env
    )

    async def run() -> list[Any]:
        async with Client(stdio_client(parameters)) as client:
            return await _mcp_calls(client, stdio_id)

    over_stdio = asyncio.run(run())
    with open_engine(url) as engine, serving(create_app(engine, ServerSettings(auth="none"))) as base:
        over_http = _http_calls(base, "over-http", http_id)
    _compare(over_stdio, over_http, times=True)
