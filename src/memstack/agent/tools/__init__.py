"""The agent memory tools: OpenAI tool schemas and one dispatcher (seed 001's tool texts).

>>> import memstack
>>> from memstack.agent.tools import MemoryTools
>>> with memstack.open("memory://") as mem:
...     tools = MemoryTools(mem, session_id="s1")
...     tools.dispatch("save_to_working_memory", '{"key": "notes", "data": "draft"}')
"Saved to working memory under key 'session/s1/notes'."
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .schemas import TOOLS, ToolSpec, tool_schemas

if TYPE_CHECKING:
    from .dispatcher import MemoryTools, dispatch

__all__ = ["TOOLS", "MemoryTools", "ToolSpec", "dispatch", "tool_schemas"]


def __getattr__(name: str) -> Any:
    # The dispatcher pulls in long-term memory and its search (numpy): loaded when first asked for,
    # so the tool schemas (and the command line) do not pay for it.
    if name in ("MemoryTools", "dispatch"):
        from . import dispatcher

        return getattr(dispatcher, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
