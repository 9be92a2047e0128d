"""Token pruning of a history by whole turns, over plain data.

A *turn* is a user message and the messages that follow it up to the next user message (its
answer, tool messages…); messages before the first user message form a turn of their own.

:func:`prune` keeps the newest turns whose tokens fit the limit, dropping the OLDEST WHOLE TURNS
first, so a history never starts with an orphaned answer. When even the newest turn alone does
not fit, its messages are dropped oldest first down to the last one: an assistant message leads
only when it is all that fits, and at least one message is always returned (Dify's guarantee).
Dify pruned single messages (spec 3 item 7.8); memstack prunes whole turns (DESIGN section 6).

:func:`older_is_pruned` lets a reader walking the history newest first stop early: once the
complete turns it has seen already exceed the limit, nothing older can survive :func:`prune`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["older_is_pruned", "prune", "turn_starts"]

T = TypeVar("T")


def turn_starts(roles: Sequence[str]) -> list[int]:
    """Indexes (chronological) where a turn starts: 0 and every later ``user`` message."""
    return [i for i, role in enumerate(roles) if i == 0 or role == "user"]


def prune(items: Sequence[T], roles: Sequence[str], tokens: Sequence[int], limit: int) -> list[T]:
    """The newest whole turns of ``items`` (chronological) whose ``tokens`` sum to at most ``limit``.

    ``roles[i]`` and ``tokens[i]`` describe ``items[i]``. Always returns at least one item when
    ``items`` is not empty (see the module docstring for the rule when one turn is too big).
    """
    if not (len(items) == len(roles) == len(tokens)):
        raise ValueError("items, roles and tokens must have the same length")
    if not items:
        return []
    total = sum(tokens)
    start = 0
    for turn_start in turn_starts(roles)[1:]:
        if total <= limit:
            break
        total -= sum(tokens[start:turn_start])
        start = turn_start
    while total > limit and start < len(items) - 1:
        total -= tokens[start]
        start += 1
    return list(items[start:])


def older_is_pruned(
    roles_newest_first: Sequence[str], tokens_newest_first: Sequence[int], limit: int
) -> bool:
    """True when messages older than these cannot survive :func:`prune` at ``limit``.

    That is when the complete turns among them (everything up to and including the oldest
    ``user`` message seen) already hold more than ``limit`` tokens.
    """
    total = 0
    complete = 0
    for role, count in zip(roles_newest_first, tokens_newest_first, strict=True):
        total += count
        if role == "user":
            complete = total
    return complete > limit
