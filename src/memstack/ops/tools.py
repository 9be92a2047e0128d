"""The tool door: every operation with a :class:`~memstack.ops.spec.Tool` face, for MCP and
``POST /v1/tools/{name}``.

A call names a tool and gives its arguments (an object, or JSON text as an LLM wrote it); the
context (session, scope, namespace) fills the request fields of those names. Arguments are strict
like every door (README: strict inputs); a failure raises a typed error whose one line names the
tool and the argument, and the doors map it through the one error table.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..agent.tools.dispatcher import check_arguments, decode_arguments, unknown_tool, worded
from ..agent.tools.schemas import parameters
from ..foundation.errors import InvalidRequest, MemstackError
from ..services.memory import Memory
from .registry import OPERATIONS, tool_operation
from .request import dumps, parse
from .run import arun, run
from .spec import CONTEXT, Op

__all__ = [
    "CONTEXT_ARGS",
    "TOOL_NAMES",
    "TOOL_OPS",
    "ToolCall",
    "ToolResult",
    "acall_tool",
    "call_tool",
    "input_schema",
    "run_tool",
    "tool_specs",
]

_log = logging.getLogger("memstack.ops")

CONTEXT_ARGS: Final[dict[str, dict[str, Any]]] = {
    "session_id": {"type": "string", "description": "Session the tools act for (default: 'default')."},
    "scope": {"type": "string", "description": "Long-term memory scope (default: 'default')."},
    "namespace": {
        "type": "string",
        "description": "Working-memory namespace (default: session/{session_id}).",
    },
}
"""Arguments every MCP tool also takes: the context, where MCP has no other place for it."""

TOOL_OPS: Final[tuple[Op[Any], ...]] = tuple(
    sorted(
        (op for op in OPERATIONS.values() if op.tool is not None),
        key=lambda op: not op.name.startswith("agent."),
    )
)
"""The operations with a tool: the original systems' memory tools first, then the others."""
TOOL_NAMES: Final[tuple[str, ...]] = tuple(op.tool.name for op in TOOL_OPS if op.tool is not None)
"""Every tool's name, in :data:`TOOL_OPS` order."""


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


def _tool_op(name: object) -> Op[Any]:
    op = tool_operation(name) if isinstance(name, str) else None
    if op is None or op.tool is None:
        raise unknown_tool(name, TOOL_NAMES)
    return op


def input_schema(op: Op[Any]) -> dict[str, Any]:
    """The JSON schema of ``op``'s tool arguments (without the context arguments)."""
    return parameters(op.request, op.tool_fields())


def tool_specs() -> list[dict[str, Any]]:
    """Every tool in the OpenAI tool format, in :data:`TOOL_NAMES` order."""
    specs = []
    for op in TOOL_OPS:
        if op.tool is not None:
            function = {
                "name": op.tool.name,
                "description": op.tool.description or op.summary,
                "parameters": input_schema(op),
            }
            specs.append({"type": "function", "function": function})
    return specs


def _request(op: Op[Any], arguments: object, context: ToolCall) -> Any:
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


def _result(op: Op[Any], result: Any) -> ToolResult:
    assert op.tool is not None
    if isinstance(result, str):
        return ToolResult(op.tool.name, result, None)
    return ToolResult(op.tool.name, dumps(result), result)


def call_tool(
    mem: Memory,
    name: str,
    arguments: Mapping[str, Any] | str | None,
    *,
    session_id: str = "default",
    scope: str = "default",
    namespace: str | None = None,
) -> ToolResult:
    """Run tool ``name`` on ``mem`` for ``session_id`` (long-term ``scope``, working-memory
    ``namespace``: default ``session/{session_id}``).

    Raises:
        UnknownTool: ``name`` is not in :data:`TOOL_NAMES` (the message lists them all).
        InvalidValue: bad arguments (``InvalidRequest`` for a field at fault; one line naming it).
        MemstackError: the tool failed (``'{tool} failed: …'``, keeping the error's type).
    """
    op = _tool_op(name)
    request = _request(op, arguments, ToolCall(session_id, scope, namespace))
    with worded(name):
        return _result(op, run(op, mem, request))


Runner = Callable[[Op[Any], Memory, Any], Awaitable[Any]]
"""How a server runs one parsed operation (:func:`memstack.ops.run.arun`, or a server's own
executor for the ones that wait on a model)."""


async def acall_tool(
    mem: Memory,
    name: str,
    arguments: Mapping[str, Any] | str | None,
    context: ToolCall,
    runner: Runner = arun,
) -> ToolResult:
    """:func:`call_tool` for the servers' event loops; ``runner`` runs the operation."""
    op = _tool_op(name)
    request = _request(op, arguments, context)
    with worded(name):
        return _result(op, await runner(op, mem, request))


def run_tool(mem: Memory, name: str, arguments: Mapping[str, Any] | str | None, **context: Any) -> str:
    """:func:`call_tool`'s text that never raises: a failure is one line starting with ``Error:``
    (``context``: ``session_id``, ``scope``, ``namespace``)."""
    try:
        return call_tool(mem, name, arguments, **context).text
    except MemstackError as exc:
        return f"Error: {exc}"
    except Exception:  # a tool caller must get a text whatever broke; the log keeps the trace
        _log.exception("tool %s failed", name)
        return f"Error: {name} failed unexpectedly; the server log has the details."
