"""The long-term memory tools: what each returns to the LLM, as text.

``save_memory`` saves the raw content at once (no LLM call on the write path: a save must not wait
on a model) and says so truthfully; an optional ``save_hook`` receives the saved entry for later
enrichment (the dream issue's LLM expansion) and can never undo or falsify the save.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from ...foundation.errors import EntryNotFound, InvalidKey
from ...search.evidence import relevance_gate
from ...tiers.longterm import LongTermMemory, MemoryEntry
from ...tiers.longterm.entry import NO_CATEGORY
from .refusals import refused
from .schemas import DeleteMemoryArgs, NoArgs, SaveMemoryArgs, SearchMemoryArgs, UpdateMemoryArgs
from .working_tools import split_tags

__all__ = [
    "age_text",
    "delete_memory",
    "list_memory_categories",
    "save_memory",
    "search_memory",
    "update_memory",
]

SaveHook = Callable[[MemoryEntry], object]
SEARCH_RESULTS = 20
_log = logging.getLogger(__name__)


def _blank_to_none(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


def age_text(created_at: datetime, now: float) -> str:
    """``today``, ``1 day ago`` or ``{n} days ago``: whole days since ``created_at``."""
    # Both times on datetime's microsecond grid, so a day to the microsecond is never 0.99999 days.
    days = max(0, (datetime.fromtimestamp(now, UTC) - created_at).days)
    if days == 0:
        return "today"
    return "1 day ago" if days == 1 else f"{days} days ago"


def save_memory(memory: LongTermMemory, args: SaveMemoryArgs, hook: SaveHook | None = None) -> str:
    """Save the raw content now: ``Memory saved with id '{id}'.`` (``supersedes``: the ids it
    replaces, which get ``valid_to`` and ``superseded_by``).

    Raises:
        EntryNotFound: an id of ``supersedes`` the scope does not hold (nothing is saved).
        Conflict: an entry of ``supersedes`` was already superseded.
    """
    entry = memory.save(
        content=args.content,
        category=_blank_to_none(args.category),
        tags=split_tags(args.tags),
        supersedes=split_tags(args.supersedes),
        actor="tool",
    )
    if hook is not None:
        try:
            hook(entry)
        except Exception:  # the save happened; a failing enrichment hook must not turn it into an error
            _log.exception("save_memory hook failed for memory %s", entry.id)
    return f"Memory saved with id '{entry.id}'."


def update_memory(memory: LongTermMemory, args: UpdateMemoryArgs) -> str:
    """Replace an entry's content, category and tags: ``Memory '{id}' updated.``

    Raises:
        EntryNotFound: no entry with that id (nothing is saved), or an id of ``supersedes`` the
            scope does not hold.
        Conflict: an entry of ``supersedes`` was already superseded.
    """
    entry_id = args.id.strip()
    try:
        found = memory.get(entry_id) if entry_id else None
    except InvalidKey:
        found = None  # an id that cannot exist: the same answer as an unknown one
    if found is None:
        raise refused(
            EntryNotFound,
            f"No memory entry found with id '{entry_id}'. Use SearchMemory to find the correct ID.",
        )
    entry = memory.save(
        id=found.id,
        content=args.content,
        category=_blank_to_none(args.category),
        tags=split_tags(args.tags),
        metadata=found.metadata,
        subject=found.subject,
        supersedes=split_tags(args.supersedes),
        expires_at=found.expires_at,
        actor="tool",
    )
    return f"Memory '{entry.id}' updated."


def search_memory(memory: LongTermMemory, args: SearchMemoryArgs) -> str:
    """``Found {n} memory entries:`` (``1 memory entry``) and one line each, or RockBot's
    no-result text."""
    options = args.options()  # the agent's own gate unless it set min_score (memstack.search.evidence)
    vectors = memory.embedder is not None
    entries = memory.current_count() if vectors and options["min_score"] is None else None
    options["min_score"] = relevance_gate(vectors, options["min_score"], entries)
    hits = memory.search(**options)
    if not hits:
        return "No memories found matching the search criteria."
    now = memory.engine.clock.now()
    lines = [f"Found {len(hits)} memory {'entry' if len(hits) == 1 else 'entries'}:", ""]
    for hit in hits:
        entry = hit.entry
        created = entry.created_at.astimezone(UTC)
        lines.append(
            f"- [{entry.id}] ({entry.category or NO_CATEGORY}, remembered {age_text(created, now)}): "
            f"{entry.content}"
        )
        if entry.tags:
            lines.append(f"  Tags: {', '.join(entry.tags)}")
    return "\n".join(lines)


def delete_memory(memory: LongTermMemory, args: DeleteMemoryArgs) -> str:
    """``Deleted memory entry '{id}': "{content}"``.

    Raises:
        EntryNotFound: no entry with that id (RockBot's unknown-id text), so every surface
            flags it as a failure: ``Error:`` text, 404 over HTTP, ``isError`` over MCP.
    """
    entry_id = args.id.strip()
    try:
        entry = memory.get(entry_id) if entry_id else None
    except InvalidKey:
        entry = None  # an id that cannot exist: the same answer as an unknown one
    if entry is None or not memory.delete(entry.id):
        raise refused(
            EntryNotFound,
            f"No memory entry found with id '{entry_id}'. Use SearchMemory to find the correct ID.",
        )
    return f"Deleted memory entry '{entry.id}': \"{entry.content}\""


def list_memory_categories(memory: LongTermMemory, args: NoArgs) -> str:
    """``Memory categories:`` and one ``- {cat}`` line each, or RockBot's empty text."""
    categories = memory.list_categories()
    if not categories:
        return "No categories yet. Save a memory with a category to create one."
    return "\n".join(["Memory categories:", *(f"- {c}" for c in categories)])
