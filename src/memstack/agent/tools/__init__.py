"""The agent memory tools: OpenAI tool schemas and the text renderers (RockBot's tool texts).

The library object that runs them, ``MemoryTools``, lives with the operations registry whose one
dispatcher it uses (:mod:`memstack.ops.memory_tools`); ``memstack.agent.tools.MemoryTools`` still
answers, with a deprecation warning.
"""

from __future__ import annotations

from typing import Any

from ...foundation.moved import moved_name
from .schemas import TOOLS, ToolSpec, tool_schemas

__all__ = ["TOOLS", "ToolSpec", "tool_schemas"]


def __getattr__(name: str) -> Any:
    return moved_name(__name__, name)
