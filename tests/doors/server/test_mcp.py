"""The MCP server: in-process and over streamable HTTP on loopback, sharing the tool door of the
registry with ``POST /v1/tools``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp")

import httpx
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from _serving import serving
from memstack import Memory
from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.doors.server.mcp import build_server
from memstack.engines import Engine
from memstack.ops.tools import run_tool


def _text(result: Any) -> str:
    return "".join(part.text for part in result.content)


def test_in_process_tools(mem: Memory) -> None:
    server = build_server(lambda ctx: mem)

    async def run() -> tuple[list[str], str, str, Any, Any]:
        async with Client(server) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            saved = await client.call_tool("save_memory", {"content": "Ada prefers tea", "session_id": "s1"})
            found = await client.call_tool("search_memory", {"query": "tea", "session_id": "s1"})
            unknown = await client.call_tool("delete_memory", {"id": "nope"})
            malformed = await client.call_tool("save_memory", {"tags": 5})
            return names, _text(saved), _text(found), unknown, malformed

    names, saved, found, unknown, malformed = asyncio.run(run())
    assert {"save_memory", "search_working_memory", "session_get", "conversation_history"} <= set(names)
    assert not saved.startswith("Error") and "Ada prefers tea" in found
    assert _text(unknown) == run_tool(mem, "delete_memory", {"id": "nope"})  # one dispatcher for both
    assert "No memory entry found with id 'nope'" in _text(unknown) and unknown.is_error
    assert unknown.structured_content == {"error": "EntryNotFound", "status": 404, "code": -32002}
    assert _text(malformed) == (
        "Error: invalid arguments for 'save_memory': content: required; tags: input should be a valid string."
    )
    assert malformed.is_error and "pydantic" not in _text(malformed)


@pytest.fixture
def live_server(engine: Engine) -> Iterator[tuple[str, str]]:
    """``memstack``'s app under uvicorn on a loopback port, with a key for tenant ``acme``."""
    _, token = ApiKeyStore(engine).create(["acme"])
    with serving(create_app(engine, ServerSettings(require_auth=True))) as base:
        yield base, token


def test_over_http_with_auth_and_shared_dispatcher(live_server: tuple[str, str]) -> None:
    base, token = live_server
    headers = {"Authorization": f"Bearer {token}"}

    async def run() -> tuple[str, str]:
        http = create_mcp_http_client(headers=headers)
        async with http, Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            await client.call_tool(
                "save_to_working_memory", {"key": "plan", "data": "step one", "session_id": "s1"}
            )
            via_mcp = _text(
                await client.call_tool("get_from_working_memory", {"key": "plan", "session_id": "s1"})
            )
        via_http = httpx.post(
            f"{base}/v1/tools/get_from_working_memory",
            json={"session_id": "s1", "arguments": {"key": "plan"}},
            headers=headers,
        ).json()["result"]
        return via_mcp, via_http

    via_mcp, via_http = asyncio.run(run())
    assert via_mcp == via_http == "step one"
    assert httpx.post(f"{base}/mcp", json={}).status_code == 401


def test_every_tool_failure_is_an_mcp_error_result(mem: Memory) -> None:
    from memstack.ops.tools import TOOL_NAMES

    server = build_server(lambda ctx: mem)

    async def run() -> list[Any]:
        async with Client(server) as client:
            return [
                await client.call_tool("launch_rockets", {}),
                await client.call_tool("save_memory", {"content": "a\ud800"}),
                await client.call_tool("session_put", {"key": "k", "value": 1, "session_id": 5}),
                await client.call_tool("session_put", {"key": "k", "value": 1, "session_id": "bad id"}),
                await client.call_tool("delete_memory", {"id": "nope", "scope": "s"}),
            ]

    unknown, surrogate, typed, bad_id, missing = asyncio.run(run())
    assert unknown.is_error and unknown.structured_content["status"] == 404
    # The detail is cut at 500 characters; the original systems' memory tools come first.
    assert _text(unknown).startswith(
        f"Error: unknown tool 'launch_rockets'. Available tools: {TOOL_NAMES[0]}, "
    )
    assert surrogate.is_error and surrogate.structured_content == {
        "error": "InvalidValue",
        "status": 400,
        "code": -32602,
    }
    assert "content: contains a lone surrogate" in _text(surrogate)
    assert typed.is_error and "session_id: expected a string, got int" in _text(typed)
    assert bad_id.is_error and bad_id.structured_content["error"] == "InvalidSessionId"
    assert missing.is_error and missing.structured_content["error"] == "EntryNotFound"
    for result in (unknown, surrogate, typed, bad_id, missing):
        assert "\n" not in _text(result) and "pydantic" not in _text(result)
