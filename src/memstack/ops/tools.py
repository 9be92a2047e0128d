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
from typing import Any, Final

from ..agent.tools.dispatcher import worded
from ..foundation.errors import MemstackError
from ..services.memory import Memory
from .registry import tool_table
from .run import arun, run
from .spec import Op
from .tool_door import ToolCall, ToolResult, find, input_schema, result_of, specs, tool_request

__all__ = [
    "CONTEXT_ARGS",
    "TOOL_NAMES",
    "TOOL_OPS",
    "Runner",
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

TOOL_OPS: Final[tuple[Op[Any], ...]] = tuple(tool_table().values())
"""The operations with a tool: the original systems' memory tools first, then the others."""
TOOL_NAMES: Final[tuple[str, ...]] = tuple(tool_table())
"""Every tool's name, in :data:`TOOL_OPS` order."""


def tool_specs() -> list[dict[str, Any]]:
    """Every tool in the OpenAI tool format, in :data:`TOOL_NAMES` order."""
    return specs(TOOL_OPS)


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
    op = find(tool_table(), name)
    request = tool_request(op, arguments, ToolCall(session_id, scope, namespace))
    with worded(name):
        return result_of(op, run(op, mem, request))


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
    op = find(tool_table(), name)
    request = tool_request(op, arguments, context)
    with worded(name):
        return result_of(op, await runner(op, mem, request))


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
