"""The tool door as operations of the registry: ``GET /v1/tools`` lists the tools in the OpenAI
format and ``POST /v1/tools/{name}`` runs one (the dispatcher MCP and ``MemoryTools`` use too).

The registry imports this module to build its table, so the table of tools is handed to
:func:`door_ops` rather than imported; :mod:`memstack.ops.tools` is the library's face of the same
dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field
from typing_extensions import TypedDict

from ..agent.tools.dispatcher import check_arguments, decode_arguments, unknown_tool, worded
from ..agent.tools.schemas import parameters
from ..foundation.errors import InvalidRequest
from ..services.memory import Memory
from ..tiers.session.requests import RULES as SESSION
from .request import dumps, parse
from .run import arun
from .spec import CONTEXT, Http, Op, Request

__all__ = [
    "ToolCall",
    "ToolResult",
    "door_ops",
    "find",
    "input_schema",
    "result_of",
    "specs",
    "tool_request",
]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call's context: who the tools act for."""

    session_id: str = "default"
    scope: str = "default"
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's answer: ``text`` for the model, ``data`` the operation's JSON (None for the
    original systems' tools, whose answer is text)."""

    name: str
    text: str
    data: Any


def find(tools: Mapping[str, Op[Any]], name: object) -> Op[Any]:
    """The operation of tool ``name``.

    Raises:
        UnknownTool: no tool is so named (the message lists them all).
    """
    op = tools.get(name) if isinstance(name, str) else None
    if op is None or op.tool is None:
        raise unknown_tool(name, tools)
    return op


def input_schema(op: Op[Any]) -> dict[str, Any]:
    """The JSON schema of ``op``'s tool arguments (without the context arguments)."""
    return parameters(op.request, op.tool_fields())


def specs(ops: Iterable[Op[Any]]) -> list[dict[str, Any]]:
    """The tools of ``ops`` in the OpenAI tool format, in their order."""
    found = []
    for op in ops:
        if op.tool is not None:
            function = {
                "name": op.tool.name,
                "description": op.tool.description or op.summary,
                "parameters": input_schema(op),
            }
            found.append({"type": "function", "function": function})
    return found


def tool_request(op: Op[Any], arguments: object, context: ToolCall) -> Any:
    """``op``'s request from a tool call's arguments (an object, JSON text or None) and context.

    Raises:
        InvalidValue: bad arguments (``InvalidRequest`` for a field at fault; one line naming it).
    """
    assert op.tool is not None
    name = op.tool.name
    raw = check_arguments(name, decode_arguments(name, arguments))
    offered = set(op.tool_fields())
    extra = [key for key in raw if key not in offered]
    data = {**op.tool.defaults, **{k: v for k, v in raw.items() if k in offered}, **op.tool.fixed}
    for field, value in zip(CONTEXT, (context.session_id, context.scope, context.namespace), strict=True):
        if field in op.fields and value is not None:
            data.setdefault(field, value)
    problems = [(key, "not an argument of this tool") for key in extra]
    try:
        request = parse(op.request, data, operation=name)
    except InvalidRequest as exc:
        problems += list(exc.issues)
    if problems:
        text = "; ".join(f"{where}: {what}" for where, what in problems)
        raise InvalidRequest(f"invalid arguments for '{name}': {text}.", tuple(problems))
    return request


def result_of(op: Op[Any], result: Any) -> ToolResult:
    """A tool's answer from its operation's result (text stays text; JSON is also shown as text)."""
    assert op.tool is not None
    if isinstance(result, str):
        return ToolResult(op.tool.name, result, None)
    return ToolResult(op.tool.name, dumps(result), result)


class ToolList(TypedDict):
    tools: list[dict[str, Any]]


class ToolAnswer(TypedDict):
    name: str
    result: str
    data: Any


class ListTools(Request):
    """No arguments: every tool."""


class CallTool(Request):
    name: str = Field(description="The tool's name.")
    arguments: dict[str, Any] | str | None = Field(
        None, description="The tool's arguments: an object or a JSON string (as an LLM emitted it)."
    )
    # The session tier checks the id (its rule shown here): one message on every door.
    session_id: str = Field(
        "default",
        description="Session the tools act for.",
        json_schema_extra=dict(SESSION["session_id"].json),
    )
    scope: str = Field("default", max_length=128, description="Long-term scope.")
    namespace: str | None = Field(
        None, max_length=300, description="Working-memory namespace (default session/{id})."
    )


def door_ops(tools: Callable[[], Mapping[str, Op[Any]]]) -> tuple[Op[Any], ...]:
    """``tools.list`` and ``tools.call`` over the tool table ``tools()`` returns (tool name -> its
    operation, in the order the tools are listed)."""

    def listed(mem: Memory, r: ListTools) -> ToolList:
        return {"tools": specs(tools().values())}

    async def called(mem: Memory, r: CallTool) -> ToolAnswer:
        op = find(tools(), r.name)
        request = tool_request(op, r.arguments, ToolCall(r.session_id, r.scope, r.namespace))
        with worded(r.name):
            answer = result_of(op, await arun(op, mem, request))
        return {"name": answer.name, "result": answer.text, "data": answer.data}

    return (
        Op(
            "tools.list",
            "Tool schemas in the OpenAI tool format.",
            ListTools,
            listed,
            ToolList,
            "memstack.ops.tools.tool_specs()",
            (Http("GET /v1/tools"),),
        ),
        Op(
            "tools.call",
            "Run one tool call as a model emitted it (a failure has the status of its error).",
            CallTool,
            called,
            ToolAnswer,
            "memstack.ops.tools.call_tool(mem, name, arguments, session_id=..., scope=..., namespace=...)",
            (Http("POST /v1/tools/{name}"),),
        ),
    )
