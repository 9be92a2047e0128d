"""The agent memory tools of the original systems (RockBot's ``save_memory``, ``search_memory``,
working-memory tools...) as operations of their own: tool-only, with the originals' arguments and
texts (:mod:`memstack.agent.tools`), over the caller's session, scope and namespace.

Their search parameters are the ones every door takes (``search_memory`` and ``GET /v1/memories``
share :class:`~memstack.tiers.longterm.search_params.SearchParams`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from pydantic import Field, create_model

from ..agent.tools.schemas import TOOLS, ToolSpec
from ..services.memory import Memory
from .spec import Op, Request, Tool

if TYPE_CHECKING:
    from ..agent.tools.session import ToolSession

__all__ = ["AGENT_TOOLS", "OPS", "bound"]

AGENT_TOOLS: tuple[str, ...] = tuple(spec.name for spec in TOOLS)
"""The original systems' tool names, in RockBot's order."""

_BOUND: ContextVar[ToolSession | None] = ContextVar("memstack_tool_session", default=None)


@contextlib.contextmanager
def bound(session: ToolSession) -> Iterator[None]:
    """Inside, the agent operations run on ``session`` (its configured tiers and save hook)
    instead of building one from the call's context: how ``MemoryTools`` goes through the registry."""
    token = _BOUND.set(session)
    try:
        yield
    finally:
        _BOUND.reset(token)


class _Context(Request):
    session_id: str = Field("default", max_length=128, description="The session the tools act for.")
    scope: str = Field("default", max_length=128, description="The long-term scope.")
    namespace: str | None = Field(
        None, max_length=300, description="Working-memory namespace (default session/{id})."
    )


def _expansion(mem: Memory, scope: str) -> Callable[[Any], object] | None:
    """The ``save_memory`` expansion hook when a chat model is configured (``MEMSTACK_CHAT_*``)."""
    from ..llm.chat import chat_model_from_env
    from ..services.dream.expand import ExpansionHook

    model = chat_model_from_env()
    return None if model is None else ExpansionHook(mem.long_term(scope), model)


def _handler(name: str) -> Callable[[Memory, Any], str]:
    def run(mem: Memory, request: Any) -> str:
        session = _BOUND.get()
        if session is None:
            from ..agent.tools.session import ToolSession

            hook = _expansion(mem, request.scope) if name == "save_memory" else None
            session = ToolSession(
                mem,
                scope=request.scope,
                session_id=request.session_id,
                namespace=request.namespace,
                save_hook=hook,
            )
        return session.apply(name, request)

    return run


def _op(spec: ToolSpec) -> Op[Any]:
    bases: Any = (spec.args, _Context)  # the original's arguments, then the call's context
    request: type[Request] = create_model(f"{spec.args.__name__}Call", __base__=bases)
    return Op(
        f"agent.{spec.name}",
        spec.description,
        request,
        _handler(spec.name),
        str,
        f"MemoryTools(mem, session_id=...).run({spec.name!r}, arguments)",
        tool=Tool(spec.name),
    )


OPS: tuple[Op[Any], ...] = tuple(_op(spec) for spec in TOOLS)
