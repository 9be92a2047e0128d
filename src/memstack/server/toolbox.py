"""The tools the service offers: the agent memory tools plus session and conversation helpers.

One dispatcher (:func:`call_tool`) serves the HTTP tool endpoint and the MCP server; its typed
errors become a status (HTTP) or an ``isError`` result (MCP) through the one error table. The
memory tools come from :mod:`memstack.tools`; the helpers below are a table of ``(spec, handler)``
pairs over the caller's :class:`~memstack.Memory`; :data:`TOOL_NAMES` is every tool, in order.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .._memory import Memory
from ..conversation.budget import TokenBudget
from ..errors import MemstackError, SessionExists, SessionNotFound
from ..tools import TOOLS, MemoryTools
from ..tools.dispatcher import decode_arguments, failed, parse_arguments, unknown_tool
from ..tools.schemas import ToolSpec
from ..wire import history_json
from .dream_tools import DREAM_HELPERS
from .shared_tools import SHARED_TOOLS

__all__ = ["CONTEXT_ARGS", "HELPERS", "TOOL_NAMES", "call_tool", "run_tool", "tool_specs"]

_log = logging.getLogger("memstack.server")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SessionGetArgs(_Args):
    key: str = Field(description="The key to read from the current session.")


class SessionPutArgs(_Args):
    key: str = Field(description="The key to write in the current session.")
    value: Any = Field(description="Any JSON value.")


class SessionHistoryArgs(_Args):
    limit: int = Field(20, ge=0, description="Most recent operations to return (0: all).")


class ConversationHistoryArgs(_Args):
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


class ConversationAppendArgs(_Args):
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
    # Create-if-missing: the create is one guarded batch, so of two concurrent first writes one
    # creates and the other finds it created; both then write. A session deleted in between is
    # created again, a bounded number of times.
    for attempt in range(3):
        try:
            mem.sessions.put(sid, a.key, a.value)
            break
        except SessionNotFound:
            if attempt == 2:
                raise
        with contextlib.suppress(SessionExists):
            mem.sessions.create(sid)
    return f"Stored '{a.key}' in session '{sid}'."


def _session_history(mem: Memory, sid: str, a: SessionHistoryArgs) -> str:
    if not mem.sessions.exists(sid):
        return f"Session '{sid}' has no history."
    # The HTTP route's form: stored epoch seconds leave as ISO text (memstack.wire).
    history = [history_json(item) for item in mem.sessions.history(sid, a.limit)]
    return json.dumps(history, ensure_ascii=False)


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

HELPERS.update(DREAM_HELPERS)  # dry runs and history only: applying and undoing stay with people
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


_SPECS: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS} | {
    name: spec for name, (spec, _) in HELPERS.items()
}
TOOL_NAMES: tuple[str, ...] = tuple(_SPECS)
"""Every tool the service offers: the memory tools, then the helpers."""


def tool_specs() -> list[dict[str, Any]]:
    """Every tool in the OpenAI tool format: the memory tools, then the helpers."""
    return [spec.schema() for spec in _SPECS.values()]


def call_tool(
    mem: Memory,
    name: str,
    arguments: Mapping[str, Any] | str | None,
    *,
    session_id: str = "default",
    scope: str = "default",
    namespace: str | None = None,
) -> str:
    """The text result of tool ``name`` for ``session_id`` of ``mem``'s tenant.

    Raises:
        UnknownTool: ``name`` is not in :data:`TOOL_NAMES` (the message lists them all).
        InvalidInput: bad arguments (one line naming the argument), or a bad session id, scope
            or namespace.
        MemstackError: the tool failed (``EntryNotFound`` for ``delete_memory`` of an unknown id,
            ``NamespaceFull``, ``EngineUnavailable``...).
    """
    spec = _SPECS.get(name)
    if spec is None:
        raise unknown_tool(name, TOOL_NAMES)
    if name not in HELPERS:
        tools = MemoryTools(
            mem, scope=scope, session_id=session_id, namespace=namespace, save_hook=_expansion(mem, scope)
        )
        return tools.run(name, arguments)
    raw: object = arguments
    if "scope" in spec.args.model_fields:  # the MCP context argument, for the dream tools
        raw = decode_arguments(name, arguments)
        raw.setdefault("scope", scope)
    args = parse_arguments(spec, raw)
    try:
        return HELPERS[name][1](mem, session_id, args)
    except MemstackError as exc:
        reworded = failed(name, exc)
        if reworded is exc:
            raise
        raise reworded from exc


def _expansion(mem: Memory, scope: str) -> Callable[[Any], object] | None:
    """The save_memory expansion hook when a chat model is configured (``MEMSTACK_CHAT_*``)."""
    from ..dream.expand import ExpansionHook
    from ..llm.chat import chat_model_from_env

    model = chat_model_from_env()
    return None if model is None else ExpansionHook(mem.long_term(scope), model)


def run_tool(
    mem: Memory,
    name: str,
    arguments: Mapping[str, Any] | str | None,
    *,
    session_id: str = "default",
    scope: str = "default",
    namespace: str | None = None,
) -> str:
    """:func:`call_tool` that never raises: a failure is one line starting with ``Error:``."""
    try:
        return call_tool(mem, name, arguments, session_id=session_id, scope=scope, namespace=namespace)
    except MemstackError as exc:
        return f"Error: {exc}"
    except Exception:  # a tool caller must get a text whatever broke; the log keeps the trace
        _log.exception("tool %s failed", name)
        return f"Error: {name} failed unexpectedly; the server log has the details."
