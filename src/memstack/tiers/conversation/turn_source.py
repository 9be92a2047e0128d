"""The turns of the turn log live in conversations: the one source the dream passes read.

``TurnMemory.add`` (``mem.turns.add``, ``POST /v1/context`` with ``record_turn``) keeps its
session window (what ``recent()`` injects) and its log for RockBot's replay, and also appends the
turn to a conversation, with the turn's subject: the conversation named like the session when that
conversation is empty or already holds that user's turns (or, for an unlabelled turn, nobody's);
otherwise one of its own (``t-`` and a digest of the user and the session), so a conversation
never mixes two users' turns. A user's passes therefore find the turns they recorded through the
conversations registered for them, like any other; an unlabelled session is read only by a pass
that names it.

:func:`migrate_turn_log` copies the turn-log entries written before this into their conversations,
with their time and message id (a pass that read a turn already does not read its copy again).
It is idempotent: an entry whose message is in its conversation already is skipped.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ...foundation.errors import EntryNotFound
from .activity import owner_of
from .message import _MESSAGE_ID, CONVERSATION_RULE
from .turn_ids import message_id_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .store import ConversationStore

__all__ = ["candidates", "migrate_turn_log", "mirror_turn", "turn_conversation"]


def _own(session_id: str, subject: str | None) -> str:
    digest = hashlib.sha256(f"{subject or ''}\t{session_id}".encode()).hexdigest()[:32]
    return f"t-{digest}"


def candidates(session_id: str, subject: str | None) -> list[str]:
    """The conversations a turn of ``session_id`` labelled ``subject`` may live in."""
    found = [session_id] if CONVERSATION_RULE.fullmatch(session_id) else []
    return [*found, _own(session_id, subject)]


def turn_conversation(store: ConversationStore, session_id: str, subject: str | None) -> str:
    """The conversation the turns of ``session_id`` labelled ``subject`` go to (see the module)."""
    first = candidates(session_id, subject)[0]
    if first == session_id and (
        store.count(session_id) == 0 or owner_of(store.engine, session_id) == subject
    ):
        return session_id
    return _own(session_id, subject)


def _message_id(entry: dict[str, Any]) -> str:
    found = message_id_of(entry)
    return found if _MESSAGE_ID.fullmatch(found) else "l" + hashlib.sha256(found.encode()).hexdigest()[:11]


def mirror_turn(store: ConversationStore, entry: dict[str, Any]) -> bool:
    """Append the turn-log ``entry`` to its conversation unless its message is there already;
    True when appended."""
    subject = entry.get("subject")
    session = str(entry["session_id"])
    message_id = _message_id(entry)
    for conversation_id in candidates(session, subject):
        try:
            store.get(conversation_id, message_id)
            return False
        except EntryNotFound:
            continue
    target = turn_conversation(store, session, subject)
    message = {
        "role": entry["role"],
        "content": entry["content"],
        "message_id": message_id,
        "created_at": float(entry.get("timestamp", store.engine.clock.now())),
    }
    store.extend(target, [message], subject=subject if isinstance(subject, str) else None)
    return True


def migrate_turn_log(entries: Iterable[dict[str, Any]], store: ConversationStore) -> int:
    """Copy every turn-log entry of ``entries`` (``TurnMemory.log_entries()``) not in its
    conversation yet into it; the number copied."""
    return sum(mirror_turn(store, dict(entry)) for entry in entries)
