"""The agent tools of one session: RockBot's tool texts over one long-term scope and one
working-memory namespace. Arguments arrive checked (the operations registry's tool door parses them,
:mod:`memstack.ops.tools`); this class only runs a tool's text renderer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ...engines.base import Engine
from ...services.memory import Memory
from ...tiers.longterm import LongTermMemory
from ...tiers.longterm.validate import check_session_id
from ...tiers.working import WorkingMemory
from . import longterm_tools as lt_tools
from . import working_tools as wm_tools
from .dispatcher import worded

__all__ = ["ToolSession"]


class ToolSession:
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
        self.source: Memory | Engine = mem_or_engine
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

    def apply(self, name: str, args: BaseModel) -> str:
        """The text of tool ``name`` run with arguments already validated by its model.

        Raises:
            MemstackError: the tool failed (``'{name} failed: …'``, keeping the error's type).
        """
        with worded(name):
            return self._handlers[name](args)
