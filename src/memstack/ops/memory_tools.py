"""``MemoryTools``: the agent tools of one session as a library object, through the one tool
dispatcher (:func:`memstack.ops.tools.call_tool`, the registry's, which MCP and
``POST /v1/tools/{name}`` use too).

:meth:`MemoryTools.run` takes what an LLM produced (a tool name and its arguments as JSON text,
possibly malformed) and returns the tool's text, or raises a typed error (unknown tool, bad JSON,
missing or invalid arguments, a refused write, an engine error) whose one-line message names the
tool and the argument. :meth:`MemoryTools.dispatch` is the same call that never raises: a failure
comes back as text starting with ``Error:`` so the model can correct itself; nothing is ever
reported as saved unless it was.

>>> import memstack
>>> from memstack.ops.memory_tools import MemoryTools
>>> with memstack.open("memory://") as mem:
...     tools = MemoryTools(mem, session_id="s1")
...     tools.dispatch("save_to_working_memory", '{"key": "notes", "data": "draft"}')
"Saved to working memory under key 'session/s1/notes'."
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..agent.tools.dispatcher import decode_arguments, unknown_tool
from ..agent.tools.schemas import TOOLS, tool_schemas
from ..agent.tools.session import ToolSession
from ..foundation.errors import MemstackError
from ..services.memory import Memory
from .agent import AGENT_TOOLS, bound
from .tools import call_tool

__all__ = ["MemoryTools", "dispatch", "run"]

_log = logging.getLogger(__name__)
_SPECS = {spec.name: spec for spec in TOOLS}


class MemoryTools(ToolSession):
    """The agent memory tools of one session: long-term memory of ``scope``, working memory of
    ``namespace`` (default ``session/{session_id}``). Constructed as
    :class:`~memstack.agent.tools.session.ToolSession` is; its calls go through the registry.

    Raises:
        InvalidSessionId: a malformed session id.
        InvalidKey: a bad scope or namespace.
    """

    @property
    def memory(self) -> Memory:
        """The memory the registry runs the calls on (an engine given gets one that only carries it)."""
        source = self.source
        if not isinstance(source, Memory):
            source = self.source = Memory(source)
        return source

    @staticmethod
    def schemas() -> list[dict[str, Any]]:
        """Every tool in the OpenAI tool format (pass as ``tools=``)."""
        return tool_schemas()

    def dispatch(self, name: str, arguments_json: str | Mapping[str, Any] | None) -> str:
        """Run one tool call; never raises (see :func:`dispatch`)."""
        return dispatch(self, name, arguments_json)

    def run(self, name: str, arguments: str | Mapping[str, Any] | None) -> str:
        """Run one tool call; failures raise typed errors (see :func:`run`)."""
        return run(self, name, arguments)

    def call(self, tool_call: Mapping[str, Any]) -> dict[str, Any]:
        """Run an OpenAI ``tool_calls`` item and return the ``{"role": "tool", ...}`` reply message."""
        function = tool_call.get("function") or {}
        name = function.get("name") if isinstance(function, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        content = dispatch(self, name if isinstance(name, str) else "", arguments)
        return {"role": "tool", "tool_call_id": tool_call.get("id", ""), "content": content}


def run(tools: MemoryTools, name: str, arguments: str | Mapping[str, Any] | None) -> str:
    """The text result of the tool call ``name(arguments)``; failures raise.

    Raises:
        UnknownTool: ``name`` is not one of the agent tools (the message lists them all).
        InvalidValue: bad arguments (``InvalidRequest`` naming the argument at fault).
        MemstackError: the tool failed; the message starts with ``'{name} failed:'`` and the type
            says why (``EntryNotFound`` for ``delete_memory`` of an unknown id, ``NamespaceFull``...).
    """
    if not isinstance(name, str) or name not in AGENT_TOOLS:
        raise unknown_tool(name, AGENT_TOOLS)
    session = tools
    raw = decode_arguments(name, arguments)
    # A tool's own ``namespace`` argument (browse another namespace) is the registry's context field
    # of that name; left out, the bound session's own namespace applies.
    namespace = raw.pop("namespace", None) if "namespace" in _SPECS[name].args.model_fields else None
    with bound(session):
        result = call_tool(
            tools.memory,
            name,
            raw,
            session_id=session.session_id,
            scope=session.long_term.scope,
            namespace=namespace,
        )
    return result.text


def dispatch(tools: MemoryTools, name: str, arguments_json: str | Mapping[str, Any] | None) -> str:
    """The text result of the tool call ``name(arguments_json)`` for the session of ``tools``.

    ``arguments_json`` is the JSON text an LLM produced (a mapping is accepted too). Never
    raises: every failure is returned as one line starting with ``Error:`` (see :func:`run`).
    """
    try:
        return run(tools, name, arguments_json)
    except MemstackError as exc:
        return f"Error: {exc}"
    except Exception as exc:  # the LLM must get a text, whatever broke; the log keeps the trace
        _log.exception("tool %s failed", name)
        return f"Error: {name} failed unexpectedly ({type(exc).__name__})."
