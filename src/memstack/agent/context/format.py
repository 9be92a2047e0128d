"""The seed's texts for per-turn context: block headers, line formats, remaining time. Pure.

Every string an LLM sees from the context builder is made here, so the wording lives in one place
(spec items 34-36 and seed 001, "Memory injection flow").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = [
    "PATROL_HEADER",
    "RECALL_HEADER",
    "SUBAGENT_HEADER",
    "WORKING_HEADER",
    "format_remaining",
    "inventory_line",
    "join_block",
    "recall_line",
]

RECALL_HEADER: Final = "Recalled from long-term memory (relevant to this message):"
WORKING_HEADER: Final = (
    "Working memory (scratch space — use search_working_memory or get_from_working_memory to retrieve):"
)
PATROL_HEADER: Final = (
    "Patrol findings in working memory (use get_from_working_memory with the full key to read):"
)
# The seed names this block (step 7 of its injection flow) but gives no header text; this one
# follows the patrol header's wording.
SUBAGENT_HEADER: Final = (
    "Subagent research outlines in working memory (use get_from_working_memory with the full key to "
    "read an index, then the chunks it lists):"
)


def format_remaining(seconds: float) -> str:
    """Time left as the seed writes it (spec item 36): ``4m32s``, ``125m05s``, ``45s``.

    Whole seconds, rounded down; a negative time reads ``0s``.
    """
    total = int(max(0.0, seconds))
    if total >= 60:
        return f"{total // 60}m{total % 60:02d}s"
    return f"{total}s"


def recall_line(entry_id: str, category: str | None, content: str) -> str:
    """``- [{id}] ({category or "general"}): {content}`` (spec item 34)."""
    return f"- [{entry_id}] ({category or 'general'}): {content}"


def inventory_line(key: str, remaining_seconds: float, category: str | None, tags: Sequence[str]) -> str:
    """``- {key}: expires in {remaining}[, category: {c}][, tags: {t1, t2}]`` (spec item 35)."""
    line = f"- {key}: expires in {format_remaining(remaining_seconds)}"
    if category:
        line += f", category: {category}"
    if tags:
        line += f", tags: {', '.join(tags)}"
    return line


def join_block(header: str, lines: Sequence[str]) -> str:
    """A block's text: the header, then one line each (``\\n``-joined)."""
    return "\n".join([header, *lines])
