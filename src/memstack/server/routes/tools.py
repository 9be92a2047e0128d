"""``/v1/tools``: the agent memory tools over HTTP (the same dispatcher the MCP server uses)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from ..app import TenantMemory
from ..toolbox import call_tool, tool_specs
from ._common import ERRORS

router = APIRouter(prefix="/v1/tools", tags=["tools"], responses=ERRORS)


class ToolCall(BaseModel):
    arguments: dict[str, Any] | str | None = Field(
        None, description="The tool's arguments: an object or a JSON string (as an LLM emitted it)."
    )
    session_id: str = Field("default", description="Session the tools act for.")
    scope: str = Field("default", description="Long-term scope.")
    namespace: str | None = Field(None, description="Working-memory namespace (default session/{id}).")


class ToolResult(BaseModel):
    name: str
    result: str = Field(description="The tool's text result.")


class ToolList(BaseModel):
    tools: list[dict[str, Any]]


@router.get("", response_model=ToolList, summary="Tool schemas in the OpenAI tool format")
def list_tools() -> ToolList:
    return ToolList(tools=tool_specs())


@router.post(
    "/{name}",
    response_model=ToolResult,
    summary="Run one tool call",
    description="A failure is a problem with the status of its error: 404 for an unknown tool or "
    "an unknown memory id, 400 for bad arguments (the detail names the argument), 429 for a full "
    "working-memory namespace, 503 when the engine is unavailable.",
)
def call(mem: TenantMemory, name: str, body: ToolCall) -> ToolResult:
    text = call_tool(
        mem, name, body.arguments, session_id=body.session_id, scope=body.scope, namespace=body.namespace
    )
    return ToolResult(name=name, result=text)
