"""The working-memory tools (spec items 48-52): what each returns to the LLM, as text.

Each function takes the caller's :class:`WorkingMemory` (bound to its own namespace) and the
validated arguments, and returns the tool's text. Refusals the LLM can act on (a full namespace, a
write into another namespace) raise typed errors worded for it (``NamespaceFull``, ``InvalidKey``);
the dispatcher turns every error into tool error text (or a status, over HTTP).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from ...foundation.errors import InvalidKey, NamespaceFull
from ...tiers.working import WorkingEntry, WorkingMemory
from ...tiers.working import keys as wkeys
from ..context.format import format_remaining
from .refusals import refused
from .schemas import (
    KeyArgs,
    ListWorkingMemoryArgs,
    SaveToWorkingMemoryArgs,
    SearchWorkingMemoryArgs,
)

__all__ = [
    "delete_from_working_memory",
    "get_from_working_memory",
    "list_working_memory",
    "save_to_working_memory",
    "search_working_memory",
    "split_tags",
]

PREVIEW_CHARS: Final = 120
LISTING_LIMIT: Final = 500
"""Most entries one listing shows (the seed's later versions list at least 500)."""


def split_tags(tags: str | None) -> list[str] | None:
    """Comma-split, trimmed, blanks removed; None when nothing is left (spec item 48)."""
    if tags is None:
        return None
    parts = [t.strip() for t in tags.split(",") if t.strip()]
    return parts or None


def _blank_to_none(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _suffix(entry: WorkingEntry, now: float) -> str:
    text = f"expires in {format_remaining(entry.remaining(now))}"
    if entry.category:
        text += f", category: {entry.category}"
    if entry.tags:
        text += f", tags: {', '.join(entry.tags)}"
    return text


def _full_key(wm: WorkingMemory, key: str) -> str:
    # The key as the tool texts show it, even when it is ill-formed (then the store refuses it).
    try:
        return wkeys.resolve_read(wm.namespace, key)
    except InvalidKey:
        return key if "/" in key else f"{wm.namespace}/{key}"


def save_to_working_memory(wm: WorkingMemory, args: SaveToWorkingMemoryArgs) -> str:
    """``Saved to working memory under key '{fullKey}'.``

    Raises:
        NamespaceFull: the namespace is at its cap (the message says what to do).
        InvalidKey: a key outside the caller's own namespace, or malformed.
    """
    full = _full_key(wm, args.key)
    ttl = None if args.ttl_minutes is None else args.ttl_minutes * 60
    try:
        entry = wm.set(
            args.key, args.data, ttl=ttl, category=_blank_to_none(args.category), tags=split_tags(args.tags)
        )
    except NamespaceFull:
        raise refused(
            NamespaceFull,
            f"not saved, working memory namespace '{wm.namespace}' is full "
            f"({wm.max_entries} live entries). "
            f"Delete an entry you no longer need or wait for one to expire, then save '{full}' again.",
        ) from None
    except InvalidKey as exc:
        raise refused(InvalidKey, f"not saved, {exc}") from None
    return f"Saved to working memory under key '{entry.key}'."


def get_from_working_memory(wm: WorkingMemory, args: KeyArgs) -> str:
    """The raw value, or ``Working memory entry '{fullKey}' not found or has expired.``"""
    entry = wm.get(args.key.strip())
    if entry is None:
        return f"Working memory entry '{_full_key(wm, args.key.strip())}' not found or has expired."
    return _text(entry.value)


def delete_from_working_memory(wm: WorkingMemory, args: KeyArgs) -> str:
    """``Working memory entry '{fullKey}' deleted.`` (also when it was already gone, as the seed).

    Raises:
        InvalidKey: a key outside the caller's own namespace, or malformed.
    """
    key = args.key.strip()
    try:
        wm.delete(key)
    except InvalidKey as exc:
        raise refused(InvalidKey, f"not deleted, {exc}") from None
    return f"Working memory entry '{_full_key(wm, key)}' deleted."


def _prefix(wm: WorkingMemory, namespace: str | None) -> tuple[str, bool]:
    given = _blank_to_none(namespace)
    return (wm.namespace, True) if given is None else (wkeys.normalize_prefix(given), False)


def list_working_memory(wm: WorkingMemory, args: ListWorkingMemoryArgs) -> str:
    """The keys under a prefix with their expiry, category and tags (spec item 51)."""
    prefix, own = _prefix(wm, args.namespace)
    entries = wm.list(prefix, with_values=False)[:LISTING_LIMIT]
    if not entries:
        return "Working memory is empty." if own else f"No entries found in namespace '{prefix}'."
    now = wm.engine.now_ms() / 1000
    lines = [f"Working memory '{prefix}' ({len(entries)} entries):"]
    lines += [f"- {e.key} ({_suffix(e, now)})" for e in entries]
    return "\n".join(lines).rstrip()


def _describe(query: str | None, category: str | None, tags: str | None) -> str:
    parts = [
        f"{name}='{value}'"
        for name, value in (("query", query), ("category", category), ("tags", tags))
        if value
    ]
    return f"({', '.join(parts)})" if parts else "(no filters)"


def _preview(value: object) -> str:
    text = _text(value)
    return text[:PREVIEW_CHARS] + "…" if len(text) > PREVIEW_CHARS else text


def search_working_memory(wm: WorkingMemory, args: SearchWorkingMemoryArgs) -> str:
    """Matching entries with a 120-character preview of each value (spec item 52)."""
    query, category, tags = (
        _blank_to_none(args.query),
        _blank_to_none(args.category),
        _blank_to_none(args.tags),
    )
    prefix, _own = _prefix(wm, args.namespace)
    results: Sequence[WorkingEntry] = wm.search(
        query, category=category, tags=split_tags(tags), prefix=prefix
    )
    desc = _describe(query, category, tags)
    if not results:
        return f"No working memory entries matched {desc} in namespace '{prefix}'."
    now = wm.engine.now_ms() / 1000
    lines = [f"Working memory search {desc} in '{prefix}' — {len(results)} result(s):"]
    lines += [f"- {e.key} ({_suffix(e, now)}): {_preview(e.value)}" for e in results]
    return "\n".join(lines)
