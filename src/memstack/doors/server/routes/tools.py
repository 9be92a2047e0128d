"""``/v1/tools``: the agent tools over HTTP, generated from the registry (the MCP server runs the
same dispatcher, :mod:`memstack.ops.tools`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from ....ops.tools import ToolCall, acall_tool, tool_specs
from ..app import TenantMemory
from ._common import ERRORS, client_route

router = APIRouter(prefix="/v1/tools", tags=["tools"], responses=ERRORS)


class ToolCallIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    arguments: dict[str, Any] | str | None = Field(
        None, description="The tool's arguments: an object or a JSON string (as an LLM emitted it)."
    )
    session_id: str = Field("default", max_length=128, description="Session the tools act for.")
    scope: str = Field("default", max_length=128, description="Long-term scope.")
    namespace: str | None = Field(
        None, max_length=300, description="Working-memory namespace (default session/{id})."
    )


class ToolResultOut(BaseModel):
    name: str
    result: str = Field(description="The tool's text result.")
    data: Any = Field(None, description="The operation's JSON result (null for text-only tools).")


class ToolList(BaseModel):
    tools: list[dict[str, Any]]


@client_route(
    router.get,
    "",
    "list_tools",
    "tools.list",
    response_model=ToolList,
    summary="Tool schemas in the OpenAI tool format",
)
def list_tools() -> ToolList:
    return ToolList(tools=tool_specs())


@client_route(
    router.post,
    "/{name}",
    "call_tool",
    "tools.call",
    response_model=ToolResultOut,
    summary="Run one tool call",
    description="A failure is a problem with the status of its error: 404 for an unknown tool or "
    "an unknown memory id, 400 for bad arguments (the detail names the argument), 429 for a full "
    "working-memory namespace, 503 when the engine is unavailable.",
)
async def call(mem: TenantMemory, name: str, body: ToolCallIn, request: Request) -> ToolResultOut:
    context = ToolCall(session_id=body.session_id, scope=body.scope, namespace=body.namespace)
    # a tool that waits on a model (dream_dry_run) runs on the model threads, not the shared pool
    runner = request.app.state.slow_work.runner(str(request.state.tenant))
    result = await acall_tool(mem, name, body.arguments, context, runner)
    return ToolResultOut(name=name, result=result.text, data=result.data)
