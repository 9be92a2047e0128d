"""The agent memory tools: OpenAI tool schemas and one dispatcher (seed 001's tool texts).

>>> import memstack
>>> from memstack.tools import MemoryTools
>>> with memstack.open("memory://") as mem:
...     tools = MemoryTools(mem, session_id="s1")
...     tools.dispatch("save_to_working_memory", '{"key": "notes", "data": "draft"}')
"Saved to working memory under key 'session/s1/notes'."
"""

from __future__ import annotations

from .dispatcher import MemoryTools, dispatch
from .schemas import TOOLS, ToolSpec, tool_schemas

__all__ = ["TOOLS", "MemoryTools", "ToolSpec", "dispatch", "tool_schemas"]
