"""The three memory actions every framework adapter offers an agent (save, search, forget), once.

They work on one long-term scope and label what they save with the end user (``subject``), so
``Memory.forget(subject=…)`` removes it; the results are plain JSON-able dicts a tool returns to a model.
"""

from __future__ import annotations

from typing import Any

from ...tiers.longterm import LongTermMemory

__all__ = ["check_long_term", "forget_memory", "save_memory", "search_memory"]


def check_long_term(value: object) -> LongTermMemory:
    """``value`` if it is a memstack :class:`~memstack.tiers.longterm.LongTermMemory`.

    Raises:
        TypeError: anything else.
    """
    if not isinstance(value, LongTermMemory):
        raise TypeError(f"long_term must be a memstack LongTermMemory, got {type(value).__name__}")
    return value


def save_memory(
    long_term: LongTermMemory,
    content: str,
    *,
    category: str | None = None,
    tags: list[str] | None = None,
    subject: str | None = None,
) -> dict[str, Any]:
    """Save one memory (an exact duplicate is not saved twice) and return its id and content."""
    entry = long_term.save(
        content=content,
        category=category or None,
        tags=tags or None,
        subject=subject,
        dedupe="exact",
        actor="tool",
    )
    return {"id": entry.id, "content": entry.content}


def search_memory(long_term: LongTermMemory, query: str, *, limit: int = 5) -> list[dict[str, Any]]:
    """The memories most relevant to ``query``: id, content, category, tags and score of each."""
    hits = long_term.search(query, limit=limit)
    return [
        {
            "id": hit.entry.id,
            "content": hit.entry.content,
            "category": hit.entry.category,
            "tags": list(hit.entry.tags),
            "score": hit.score,
        }
        for hit in hits
    ]


def forget_memory(long_term: LongTermMemory, memory_id: str) -> dict[str, Any]:
    """Delete one memory by id; ``deleted`` says whether it existed."""
    return {"id": memory_id, "deleted": long_term.delete(memory_id)}
