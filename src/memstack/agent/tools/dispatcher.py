"""``MemoryTools`` and the one dispatcher: a tool call in, the tool's text out.

:func:`run` takes what an LLM produced (a tool name and its arguments as JSON text, possibly
malformed) and returns the tool's text, or raises a typed error (unknown tool, bad JSON, missing or
invalid arguments, a refused write, an engine error) whose one-line message names the tool and the
argument. :func:`dispatch` is the same call that never raises: a failure comes back as text starting
with ``Error:`` so the model can correct itself; nothing is ever reported as saved unless it was.
Framework-free: the HTTP and MCP servers call :func:`run` and map its errors to statuses.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from ...engines.base import Engine
from ...foundation.errors import InvalidValue, MemstackError, UnknownTool
from ...foundation.limits import MAX_DEPTH, MAX_INT_DIGITS, check_json, check_text
from ...services.memory import Memory
from ...tiers.longterm import LongTermMemory
from ...tiers.longterm.validate import check_session_id
from ...tiers.working import WorkingMemory
from . import longterm_tools as lt_tools
from . import working_tools as wm_tools
from .refusals import is_worded, refused
from .schemas import TOOLS, ToolSpec, tool_schemas

__all__ = [
    "MemoryTools",
    "check_arguments",
    "dispatch",
    "failed",
    "parse_arguments",
    "run",
    "unknown_tool",
    "worded",
]

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
        if long_term is None:  # a Memory's scopes carry its retrieval setting (embedder)
            long_term = (
                mem_or_engine.long_term(scope)
                if isinstance(mem_or_engine, Memory)
                else LongTermMemory(engine, scope)
            )
        self.long_term = long_term
        self.working = (
            working
            if working is not None
            else WorkingMemory(engine, namespace if namespace is not None else f"session/{self.session_id}")
        )
        self.save_hook = save_hook
        self._handlers: dict[str, Callable[[Any], str]] = {
            "save_memory": lambda a: lt_tools.save_memory(self.long_term, a, self.save_hook),
            "update_memory": lambda a: lt_tools.update_memory(self.long_term, a),
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

    def dispatch(self, name: str, arguments_json: str | Mapping[str, Any] | None) -> str:
        """Run one tool call; never raises (see :func:`dispatch`)."""
        return dispatch(self, name, arguments_json)

    def run(self, name: str, arguments: str | Mapping[str, Any] | None) -> str:
        """Run one tool call; failures raise typed errors (see :func:`run`)."""
        return run(self, name, arguments)

    def apply(self, name: str, args: BaseModel) -> str:
        """Run tool ``name`` with arguments already validated by its model (see :func:`run`).

        Raises:
            MemstackError: the tool failed (worded as :func:`run` says).
        """
        with worded(name):
            return self._handlers[name](args)

    def call(self, tool_call: Mapping[str, Any]) -> dict[str, Any]:
        """Run an OpenAI ``tool_calls`` item and return the ``{"role": "tool", ...}`` reply message."""
        function = tool_call.get("function") or {}
        name = function.get("name") if isinstance(function, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        content = dispatch(self, name if isinstance(name, str) else "", arguments)
        return {"role": "tool", "tool_call_id": tool_call.get("id", ""), "content": content}


def decode_arguments(name: str, arguments: object) -> dict[str, Any]:
    """The arguments of a call to tool ``name`` as a dict (JSON text, a mapping, or None for none).

    Raises:
        InvalidValue: not JSON, or not a JSON object.
    """
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    raw: object = arguments
    if isinstance(arguments, str):
        try:
            raw = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise InvalidValue(
                f"the arguments of '{name}' are not valid JSON ({exc.msg} at position {exc.pos})."
            ) from None
        except RecursionError:
            raise InvalidValue(
                f"the arguments of '{name}' are nested deeper than {MAX_DEPTH} levels."
            ) from None
        except ValueError:  # CPython's own cap on integer digits, met while parsing
            raise InvalidValue(
                f"the arguments of '{name}' hold an integer of more than {MAX_INT_DIGITS} digits."
            ) from None
    elif isinstance(arguments, Mapping):
        raw = dict(arguments)
    if not isinstance(raw, dict):
        raise InvalidValue(f"the arguments of '{name}' must be a JSON object, got {type(raw).__name__}.")
    return raw


def _problem(err: Any) -> str:
    where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
    kind = err.get("type", "")
    if kind == "missing":
        return f"{where}: required"
    if kind == "extra_forbidden":
        return f"{where}: not an argument of this tool"
    message = str(err.get("msg", "invalid"))
    return f"{where}: {message[:1].lower()}{message[1:]}"


def check_arguments(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` when every argument name is text and every value JSON within :mod:`memstack.foundation.limits`.

    Raises:
        InvalidValue: the first argument breaking a limit (``invalid arguments for '{name}': …``).
    """
    try:
        for key, value in raw.items():
            check_text(key, "argument name")
            check_json(value, key)
    except InvalidValue as exc:
        raise InvalidValue(f"invalid arguments for '{name}': {exc}.") from None
    return raw


def parse_arguments(spec: ToolSpec, arguments: object) -> BaseModel:
    """The validated arguments of a call to ``spec`` (JSON text, a mapping, or None for none).

    Raises:
        InvalidValue: not JSON, not an object, a value breaking :mod:`memstack.foundation.limits` (a lone
            surrogate, a non-finite number, deep nesting), or a missing, extra or ill-typed
            argument; one line naming the argument, without pydantic's text or links.
    """
    raw = check_arguments(spec.name, decode_arguments(spec.name, arguments))
    try:
        return spec.args.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(_problem(err) for err in exc.errors(include_url=False, include_input=False))
        raise InvalidValue(f"invalid arguments for '{spec.name}': {problems}.") from None


def unknown_tool(name: object, known: Iterable[str]) -> UnknownTool:
    """The error for a tool name that is not in ``known`` (the message lists every known tool)."""
    shown = name[:80] if isinstance(name, str) else name  # repr() escapes lone surrogates
    return UnknownTool(f"unknown tool {shown!r}. Available tools: {', '.join(known)}.")


def failed(name: str, exc: MemstackError) -> MemstackError:
    """``exc`` re-worded as ``'{name} failed: {message}'``, keeping its type (so its status); a
    refusal the tool worded itself (:func:`~memstack.agent.tools.refusals.refused`) stays as it is."""
    if is_worded(exc):
        return exc
    try:
        # Worded once: the registry's tool door and the dispatcher both wrap a call.
        return refused(type(exc), f"{name} failed: {exc}")
    except TypeError:  # an error type with its own constructor keeps its own words
        return exc


@contextlib.contextmanager
def worded(name: str) -> Iterator[None]:
    """A :class:`~memstack.MemstackError` raised inside re-raised as :func:`failed` words it."""
    try:
        yield
    except MemstackError as exc:
        reworded = failed(name, exc)
        if reworded is exc:
            raise
        raise reworded from exc


def run(tools: MemoryTools, name: str, arguments: str | Mapping[str, Any] | None) -> str:
    """The text result of the tool call ``name(arguments)``; failures raise.

    Raises:
        UnknownTool: ``name`` is not one of :data:`TOOLS` (the message lists them all).
        InvalidValue: bad arguments (see :func:`parse_arguments`).
        MemstackError: the tool failed; the message starts with ``'{name} failed:'`` and the type
            says why (``EntryNotFound`` for ``delete_memory`` of an unknown id, ``NamespaceFull``...).
    """
    spec = _SPECS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise unknown_tool(name, _SPECS)
    return tools.apply(spec.name, parse_arguments(spec, arguments))


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
