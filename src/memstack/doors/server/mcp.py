"""The MCP server (official Python SDK, 2.x): every operation with a tool, from the registry
(:mod:`memstack.ops.tools`, the dispatcher ``POST /v1/tools/{name}`` runs too). A tool's result is
its text for the model and, as ``structuredContent``, the operation's JSON (the same JSON the HTTP
route and the CLI's ``--json`` give), or ``{"result": text}`` for the original systems' text
tools. Every failure is a tool result with ``isError`` set, one line of text, and
``structuredContent`` naming the error, its HTTP status and its JSON-RPC code (the one table of
:mod:`memstack.doors.server.error_table`).

Served over streamable HTTP at ``/mcp`` by ``memstack serve`` (bearer keys and tenants as the HTTP
API), or over stdio with ``memstack serve --stdio`` (the ``default`` tenant, so a desktop agent
and a local HTTP client share data).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from ... import __version__
from ...engines.prefixed import tenant_engine
from ...foundation.errors import InvalidValue
from ...foundation.limits import check_text
from ...ops.run import arun
from ...ops.tools import CONTEXT_ARGS, TOOL_OPS, Runner, ToolCall, ToolResult, acall_tool, input_schema
from ...services.memory import Memory
from .error_table import describe

__all__ = ["build_server", "http_session_manager", "run_stdio", "structured"]

log = logging.getLogger("memstack.doors.server")

Resolver = Callable[[Any], Memory]
"""Maps an MCP request context to the caller's tenant memory."""

_CONTEXT_KEYS = tuple(CONTEXT_ARGS)


def _tools() -> list[types.Tool]:
    tools = []
    for op in TOOL_OPS:
        assert op.tool is not None
        schema = input_schema(op)
        schema["properties"] = {**schema["properties"], **CONTEXT_ARGS}
        description = op.tool.description or op.summary
        tools.append(types.Tool(name=op.tool.name, description=description, input_schema=schema))
    return tools


def _plain(ctx: Any) -> Runner:
    return arun


def build_server(resolve: Resolver, runner_of: Callable[[Any], Runner] = _plain) -> Server[Any]:
    """An MCP server whose tools run on the memory ``resolve`` returns for each request, by the
    runner ``runner_of`` returns for it (the HTTP server's: model calls on its model threads)."""
    tools = _tools()

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        context = {k: arguments.pop(k) for k in _CONTEXT_KEYS if k in arguments}
        try:
            call = _context(context)
            result = await acall_tool(resolve(ctx), params.name, arguments, call, runner_of(ctx))
        except Exception as exc:  # every failure is a tool result with isError, worded by the one table
            return _failure(params.name, exc)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)], structured_content=structured(result)
        )

    return Server(
        "memstack",
        version=__version__,
        instructions="Long-term, working, session, conversation and shared memory for this agent.",
        on_list_tools=list_tools,
        on_call_tool=on_call_tool,
    )


def structured(result: ToolResult) -> dict[str, Any]:
    """A tool result's ``structuredContent``: the operation's JSON, as its HTTP route answers it
    (``data`` of ``POST /v1/tools/{name}``); for the original systems' tools, whose answer is text,
    ``{"result": text}`` (``result`` of the same route). Never absent: a client reading
    ``structuredContent`` reads every tool."""
    if result.data is None:
        return {"result": result.text}
    return result.data if isinstance(result.data, dict) else {"result": result.data}


def _context(context: dict[str, Any]) -> ToolCall:
    """The session id, scope and namespace of a call (context arguments must be strings)."""
    values = []
    for key in _CONTEXT_KEYS:
        value = context.get(key)
        if value is not None and not isinstance(value, str):
            raise InvalidValue(f"{key}: expected a string, got {type(value).__name__}")
        values.append(check_text(value, key) if value else None)
    session_id, scope, namespace = values
    return ToolCall(session_id or "default", scope or "default", namespace)


def _failure(name: str, exc: Exception) -> types.CallToolResult:
    rule, error, detail = describe(exc)
    if rule.status == 500:
        log.error("tool %s failed", name, exc_info=exc)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"Error: {detail}")],
        structured_content={"error": error, "status": rule.status, "code": rule.mcp_code},
        is_error=True,
    )


def http_session_manager(server: Server[Any]) -> StreamableHTTPSessionManager:
    """A stateless streamable-HTTP manager (any worker can answer any request)."""
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return StreamableHTTPSessionManager(
        app=server, stateless=True, json_response=True, security_settings=security
    )


@contextlib.asynccontextmanager
async def running(manager: StreamableHTTPSessionManager) -> AsyncIterator[None]:
    """Run the manager's task group for the app's lifetime."""
    async with manager.run():
        yield


def run_stdio(mem: Memory) -> None:
    """Serve MCP over stdin/stdout until the client closes (the ``default`` tenant's data, searched
    with ``mem.embedder``)."""
    from mcp.server.stdio import stdio_server

    memory = Memory(tenant_engine(mem.engine, "default"), embedder=mem.embedder)
    server = build_server(lambda ctx: memory)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        memory.close()
