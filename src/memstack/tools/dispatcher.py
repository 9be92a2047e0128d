"""``MemoryTools`` and the one dispatcher: a tool call in, the tool's text out, never an exception.

:func:`dispatch` takes what an LLM produced (a tool name and its arguments as JSON text, possibly
malformed) and returns the text to send back as the tool result. Every failure (unknown tool, bad
JSON, missing or invalid arguments, a refused write, an engine error) is returned as text starting
with ``Error:`` so the model can correct itself; nothing is ever reported as saved unless it was.
Framework-free: the HTTP and MCP servers call the same function.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from .._memory import Memory
from ..engines.base import Engine
from ..errors import MemstackError, NamespaceFull
from ..longterm import LongTermMemory
from ..longterm.validate import check_session_id
from ..working import WorkingMemory
from . import longterm_tools as lt_tools
from . import working_tools as wm_tools
from .schemas import TOOLS, ToolSpec, tool_schemas

__all__ = ["MemoryTools", "dispatch"]

_log = logging.getLogger(__name__)
_SPECS: Final = {spec.name: spec for spec in TOOLS}


class MemoryTools:
    """The agent memory tools of one session: long-term memory of ``scope``, working memory of
    ``namespace`` (default ``session/{session_id}``).

    Args:
        mem_or_engine: a :class:`~memstack.Memory` or an engine.
        scope: the long-term scope.
        session_id: the session the tools act for.
        namespace: the working-memory namespace to write to (two segments).
        save_hook: called with each entry ``save_memory`` stored (e.g. to queue an LLM expansion).
        long_term: a configured :class:`LongTermMemory` to use instead of one on ``scope``.
        working: a configured :class:`WorkingMemory` to use instead of one on ``namespace``.

    Raises:
        InvalidSessionId: a malformed session id.
        InvalidKey: a bad scope or namespace.
    """

    def __init__(
        self,
        mem_or_engine: Memory | Engine,
        *,
        scope: str = "default",
        session_id: str,
        namespace: str | None = None,
        save_hook: Callable[[Any], object] | None = None,
        long_term: LongTermMemory | None = None,
        working: WorkingMemory | None = None,
    ) -> None:
        engine = mem_or_engine.engine if isinstance(mem_or_engine, Memory) else mem_or_engine
        self.session_id = check_session_id(session_id)
        self.long_term = long_term if long_term is not None else LongTermMemory(engine, scope)
        self.working = (
            working
            if working is not None
            else WorkingMemory(engine, namespace if namespace is not None else f"session/{self.session_id}")
        )
        self.save_hook = save_hook
        self._handlers: dict[str, Callable[[Any], str]] = {
            "save_memory": lambda a: lt_tools.save_memory(self.long_term, a, self.save_hook),
            "search_memory": lambda a: lt_tools.search_memory(self.long_term, a),
            "delete_memory": lambda a: lt_tools.delete_memory(self.long_term, a),
            "list_memory_categories": lambda a: lt_tools.list_memory_categories(self.long_term, a),
            "save_to_working_memory": lambda a: wm_tools.save_to_working_memory(self.working, a),
            "get_from_working_memory": lambda a: wm_tools.get_from_working_memory(self.working, a),
            "delete_from_working_memory": lambda a: wm_tools.delete_from_working_memory(self.working, a),
            "list_working_memory": lambda a: wm_tools.list_working_memory(self.working, a),
            "search_working_memory": lambda a: wm_tools.search_working_memory(self.working, a),
        }

    @property
    def namespace(self) -> str:
        """The working-memory namespace this session writes to."""
        return self.working.namespace

    @staticmethod
    def schemas() -> list[dict[str, Any]]:
        """Every tool in the OpenAI tool format (pass as ``tools=``)."""
        return tool_schemas()

    def dispatch(self, name: str, arguments_json: str | None) -> str:
        """Run one tool call; see :func:`dispatch`."""
        return dispatch(self, name, arguments_json)

    def call(self, tool_call: Mapping[str, Any]) -> dict[str, Any]:
        """Run an OpenAI ``tool_calls`` item and return the ``{"role": "tool", ...}`` reply message."""
        function = tool_call.get("function") or {}
        name = function.get("name") if isinstance(function, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        content = dispatch(self, name if isinstance(name, str) else "", arguments)
        return {"role": "tool", "tool_call_id": tool_call.get("id", ""), "content": content}


def _parse(spec: ToolSpec, arguments_json: object) -> BaseModel | str:
    if arguments_json is None or (isinstance(arguments_json, str) and not arguments_json.strip()):
        raw: object = {}
    elif isinstance(arguments_json, str):
        try:
            raw = json.loads(arguments_json)
        except json.JSONDecodeError as exc:
            return (
                f"Error: the arguments of '{spec.name}' are not valid JSON ({exc.msg} at position {exc.pos})."
            )
    elif isinstance(arguments_json, Mapping):
        raw = dict(arguments_json)
    else:
        raw = arguments_json
    if not isinstance(raw, dict):
        return f"Error: the arguments of '{spec.name}' must be a JSON object, got {type(raw).__name__}."
    try:
        return spec.args.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()
        )
        return f"Error: invalid arguments for '{spec.name}': {problems}."


def dispatch(tools: MemoryTools, name: str, arguments_json: str | Mapping[str, Any] | None) -> str:
    """The text result of the tool call ``name(arguments_json)`` for the session of ``tools``.

    ``arguments_json`` is the JSON text an LLM produced (a mapping is accepted too). Never
    raises: every failure is returned as text starting with ``Error:``.
    """
    spec = _SPECS.get(name) if isinstance(name, str) else None
    if spec is None:
        return f"Error: unknown tool '{name}'. Available tools: {', '.join(_SPECS)}."
    parsed = _parse(spec, arguments_json)
    if isinstance(parsed, str):
        return parsed
    try:
        return tools._handlers[spec.name](parsed)
    except NamespaceFull as exc:
        return f"Error: {exc}"
    except MemstackError as exc:
        return f"Error: {spec.name} failed: {exc}"
    except Exception as exc:  # the LLM must get a text, whatever broke; the log keeps the trace
        _log.exception("tool %s failed", spec.name)
        return f"Error: {spec.name} failed unexpectedly ({type(exc).__name__}: {exc})."
