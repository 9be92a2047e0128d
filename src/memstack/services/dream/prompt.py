"""The prompts of the dream passes (spec 64, 68, and the extract pass): pure text assembly."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...tiers.longterm import MemoryEntry
from .feedback import FeedbackSignal

__all__ = [
    "consolidation_prompt",
    "decision_prompt",
    "entry_lines",
    "expansion_prompt",
    "extraction_prompt",
    "feedback_lines",
    "preference_prompt",
    "prompt_digest",
]


def prompt_digest(messages: Sequence[Mapping[str, Any]]) -> str:
    """sha256 of the prompt messages (canonical JSON), hex: what a record names the prompt by."""
    text = json.dumps(list(messages), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def entry_lines(entries: Sequence[MemoryEntry]) -> list[str]:
    """``{i}. [ID:{id}] category={cat|uncategorized} tags=[{tags|(none)}]`` and the indented content."""
    lines = []
    for i, entry in enumerate(entries, 1):
        tags = ", ".join(entry.tags) if entry.tags else "(none)"
        lines.append(f"{i}. [ID:{entry.id}] category={entry.category or 'uncategorized'} tags=[{tags}]")
        lines.extend(f"   {line}" for line in entry.content.splitlines() or [""])
    return lines


def feedback_lines(feedback: Iterable[FeedbackSignal]) -> list[str]:
    """One ``- [{kind}] {text}`` line per signal; ``(none)`` when there is none."""
    lines = [f"- [{s.kind}] {s.text}" for s in feedback]
    return lines or ["(none)"]


def consolidation_prompt(
    directive: str, entries: Sequence[MemoryEntry], feedback: Sequence[FeedbackSignal]
) -> list[dict[str, Any]]:
    """System (the directive) + user message (feedback, then the numbered entries)."""
    user = [
        "## Feedback from the last 7 days",
        *feedback_lines(feedback),
        "",
        f"## Memories ({len(entries)})",
        *entry_lines(entries),
    ]
    return [{"role": "system", "content": directive}, {"role": "user", "content": "\n".join(user)}]


def preference_prompt(
    directive: str, log: Sequence[Mapping[str, Any]], feedback: Sequence[FeedbackSignal]
) -> list[dict[str, Any]]:
    """System + the turn log grouped by session (``## Session: {id}``, ``[{role}] {content}``) + feedback."""
    sessions: dict[str, list[str]] = {}
    for item in log:
        sessions.setdefault(str(item.get("session_id", "")), []).append(
            f"[{item.get('role', '')}] {item.get('content', '')}"
        )
    user: list[str] = []
    for session_id, lines in sessions.items():
        user += [f"## Session: {session_id}", *lines, ""]
    user += ["## Feedback from the last 7 days", *feedback_lines(feedback)]
    return [{"role": "system", "content": directive}, {"role": "user", "content": "\n".join(user)}]


EXPANSION_DIRECTIVE = (
    "Turn the note below into one or more self-contained long-term memories. Answer with ONE JSON "
    'array and nothing else: [{"content": "...", "category": "path/or-null", "tags": ["..."]}]. '
    "Answer [] when the note holds nothing worth keeping."
)


def expansion_prompt(content: str, category: str | None, tags: Sequence[str]) -> list[dict[str, Any]]:
    """The save_memory expansion request (spec 54)."""
    note = f"Note: {content}\nCategory: {category or '(none)'}\nTags: {', '.join(tags) or '(none)'}"
    return [{"role": "system", "content": EXPANSION_DIRECTIVE}, {"role": "user", "content": note}]


def extraction_prompt(directive: str, turns: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """System + the new turns grouped by session (``## Session: {id}``, then
    ``[ID:{message_id}] [{role}] {content}`` per turn, in log order)."""
    sessions: dict[str, list[str]] = {}
    for turn in turns:
        lines = str(turn.get("content", "")).splitlines() or [""]
        head = f"[ID:{turn['message_id']}] [{turn.get('role', '')}] {lines[0]}"
        sessions.setdefault(str(turn.get("session_id", "")), []).extend(
            [head, *(f"   {x}" for x in lines[1:])]
        )
    user: list[str] = []
    for session_id, lines in sessions.items():
        user += [f"## Session: {session_id}", *lines, ""]
    return [{"role": "system", "content": directive}, {"role": "user", "content": "\n".join(user).rstrip()}]


def decision_prompt(
    directive: str, facts: Sequence[tuple[str, Sequence[MemoryEntry]]]
) -> list[dict[str, Any]]:
    """System + each fact numbered from 1 with the stored memories most like it
    (``   [ID:{id}] {content}``, or ``   (none)``)."""
    user: list[str] = []
    for n, (content, similar) in enumerate(facts, 1):
        user.append(f"{n}. {content}")
        user.extend(f"   [ID:{e.id}] {' '.join(e.content.split())}" for e in similar)
        if not similar:
            user.append("   (none)")
    return [{"role": "system", "content": directive}, {"role": "user", "content": "\n".join(user)}]
