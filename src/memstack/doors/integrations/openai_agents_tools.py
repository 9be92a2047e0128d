"""``save_memory`` and ``search_memory`` as OpenAI Agents SDK function tools over one long-term scope."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import FunctionTool, function_tool

from ...foundation.keyspace import check_subject
from ...tiers.longterm import LongTermMemory
from ._memory_tools import check_long_term, save_memory, search_memory

__all__ = ["memory_tools"]


def memory_tools(
    long_term: LongTermMemory, *, subject: str | None = None, limit: int = 5
) -> list[FunctionTool]:
    """Function tools that let an agent save and search the memories of ``long_term``.

    ``subject``: the end user what the agent saves is about (``Memory.forget(subject=…)`` removes it).
    ``limit``: hits a search returns at most.

    Raises:
        TypeError: ``long_term`` is not a memstack LongTermMemory.
        InvalidValue: a malformed subject.
    """
    scope = check_long_term(long_term)
    user = check_subject(subject) if subject is not None else None

    async def save(content: str, category: str | None = None, tags: list[str] | None = None) -> str:
        """Remember a durable fact about the user or the task for later conversations.

        Args:
            content: the fact, as one self-contained sentence.
            category: an optional slash-separated path such as preferences/food.
            tags: optional labels.
        """
        saved = await asyncio.to_thread(
            save_memory, scope, content, category=category, tags=tags, subject=user
        )
        return json.dumps(saved, ensure_ascii=False)

    async def search(query: str) -> str:
        """Search what was remembered earlier; returns the most relevant memories as JSON.

        Args:
            query: words describing what to look for.
        """
        found: list[dict[str, Any]] = await asyncio.to_thread(search_memory, scope, query, limit=limit)
        return json.dumps(found, ensure_ascii=False)

    return [
        function_tool(save, name_override="save_memory"),
        function_tool(search, name_override="search_memory"),
    ]
