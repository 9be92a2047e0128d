"""The tools the service offers: the agent memory tools plus session and conversation helpers.

One dispatcher (:func:`run_tool`) serves the HTTP tool endpoint and the MCP server. The memory
tools come from :mod:`memstack.tools`; the helpers below are a table of
``(spec, handler)`` pairs over the caller's :class:`~memstack.Memory`. Like the memory tools,
every failure comes back as a text starting with ``Error:``, never as an exception.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from .._memory import Memory
from ..conversation.budget import TokenBudget
from ..errors import MemstackError
from ..tools import MemoryTools, tool_schemas
from ..tools.schemas import ToolSpec
from .shared_tools import SHARED_TOOLS

__all__ = ["CONTEXT_ARGS", "HELPERS", "run_tool", "tool_specs"]

_log = logging.getLogger("memstack.server")


class SessionGetArgs(BaseModel):
    key: str = Field(description="The key to read from the current session.")


class SessionPutArgs(BaseModel):
    key: str = Field(description="The key to write in the current session.")
    value: Any = Field(description="Any JSON value.")


class SessionHistoryArgs(BaseModel):
    limit: int = Field(20, ge=0, description="Most recent operations to return (0: all).")


class ConversationHistoryArgs(BaseModel):
    conversation_id: str = Field(description="The conversation to read.")
    max_token_limit: int | None = Field(None, ge=0, description="Token limit of the history (default 2000).")
    context_size: int | None = Field(
        None, ge=0, description="Instead of max_token_limit: the model's context window (Dify's budget)."
    )
    max_output_tokens: int | None = Field(
        None, ge=0, description="With context_size: tokens kept for the answer."
    )
    prompt_tokens: int | None = Field(
        None, ge=0, description="With context_size: tokens of the current prompt."
    )


class ConversationAppendArgs(BaseModel):
    conversation_id: str = Field(description="The conversation to append to.")
    role: str = Field(description="user, assistant, system or tool")
    content: str = Field(description="The message text.")


def _session_get(mem: Memory, sid: str, a: SessionGetArgs) -> str:
    if not mem.sessions.exists(sid):
        return f"Session '{sid}' has no key '{a.key}'."
    value = mem.sessions.get(sid, a.key, default=None)
    return (
        json.dumps(value, ensure_ascii=False)
        if value is not None
        else f"Session '{sid}' has no key '{a.key}'."
    )


def _session_put(mem: Memory, sid: str, a: SessionPutArgs) -> str:
    if not mem.sessions.exists(sid):
        mem.sessions.create(sid)
    mem.sessions.put(sid, a.key, a.value)
    return f"Stored '{a.key}' in session '{sid}'."


def _session_history(mem: Memory, sid: str, a: SessionHistoryArgs) -> str:
    if not mem.sessions.exists(sid):
        return f"Session '{sid}' has no history."
    return json.dumps(mem.sessions.history(sid, a.limit), ensure_ascii=False)


def _conversation_history(mem: Memory, sid: str, a: ConversationHistoryArgs) -> str:
    if mem.conversations.count(a.conversation_id) == 0:
        return f"Conversation '{a.conversation_id}' has no messages."
    budget = None
    if a.context_size is not None or a.max_output_tokens is not None or a.prompt_tokens is not None:
        budget = TokenBudget(a.context_size, a.max_output_tokens, a.prompt_tokens or 0)
    history = mem.conversations.history(
        a.conversation_id, max_token_limit=a.max_token_limit, token_budget=budget
    )
    return json.dumps(history)


def _conversation_append(mem: Memory, sid: str, a: ConversationAppendArgs) -> str:
    message = mem.conversations.append(a.conversation_id, a.role, a.content)
    return f"Appended message '{message.message_id}' to conversation '{a.conversation_id}'."


Handler = Callable[[Memory, str, Any], str]

HELPERS: dict[str, tuple[ToolSpec, Handler]] = {
    spec.name: (spec, handler)
    for spec, handler in (
        (
            ToolSpec("session_get", "Read one value of the current session's state.", SessionGetArgs),
            _session_get,
        ),
        (
            ToolSpec("session_put", "Store a JSON value in the current session's state.", SessionPutArgs),
            _session_put,
        ),
        (
            ToolSpec("session_history", "The current session's recent operations.", SessionHistoryArgs),
            _session_history,
        ),
        (
            ToolSpec(
                "conversation_history",
                "A conversation's active thread as chat messages, within a token budget.",
                ConversationHistoryArgs,
            ),
            _conversation_history,
        ),
        (
            ToolSpec("conversation_append", "Append a message to a conversation.", ConversationAppendArgs),
            _conversation_append,
        ),
    )
}

HELPERS.update(SHARED_TOOLS)  # the semantic cache and document tools of shared memory

# Arguments every tool accepts where the transport has no other place for them (MCP).
CONTEXT_ARGS: dict[str, dict[str, Any]] = {
    "session_id": {"type": "string", "description": "Session the tools act for (default: 'default')."},
    "scope": {"type": "string", "description": "Long-term memory scope (default: 'default')."},
    "namespace": {
        "type": "string",
        "description": "Working-memory namespace (default: session/{session_id}).",
    },
}


def tool_specs() -> list[dict[str, Any]]:
    """Every tool in the OpenAI tool format: the memory tools, then the helpers."""
    return tool_schemas() + [spec.schema() for spec, _ in HELPERS.values()]


def _arguments(name: str, raw: Mapping[str, Any] | str | None) -> dict[str, Any] | str:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            return f"Error: the arguments of '{name}' are not valid JSON ({exc.msg} at position {exc.pos})."
    if not isinstance(raw, Mapping):
        return f"Error: the arguments of '{name}' must be a JSON object, got {type(raw).__name__}."
    return dict(raw)


def run_tool(
    mem: Memory,
    name: str,
    arguments: Mapping[str, Any] | str | None,
    *,
    session_id: str = "default",
    scope: str = "default",
    namespace: str | None = None,
) -> str:
    """The text result of tool ``name`` for ``session_id`` of ``mem``'s tenant. Never raises."""
    try:
        if name in HELPERS:
            spec, handler = HELPERS[name]
            parsed = _arguments(name, arguments)
            if isinstance(parsed, str):
                return parsed
            try:
                args = spec.args.model_validate(parsed)
            except ValueError as exc:
                return f"Error: invalid arguments for '{name}': {exc}."
            return handler(mem, session_id, args)
        tools = MemoryTools(mem, scope=scope, session_id=session_id, namespace=namespace)
        return tools.dispatch(
            name, arguments if isinstance(arguments, str | None) else json.dumps(dict(arguments))
        )
    except MemstackError as exc:
        return f"Error: {name} failed: {exc}"
    except Exception as exc:  # a tool caller must get a text whatever broke; the log keeps the trace
        _log.exception("tool %s failed", name)
        return f"Error: {name} failed unexpectedly ({type(exc).__name__}: {exc})."
