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
from typing import TYPE_CHECKING, Any, Final

from ...foundation.errors import EntryNotFound
from ...foundation.keyspace import family_named
from ...foundation.keyspace.families import CONVERSATION
from .activity import owner_of
from .message import _MESSAGE_ID, CONVERSATION_RULE
from .turn_ids import message_id_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .store import ConversationStore

__all__ = ["candidates", "migrate_turn_log", "mirror_turn", "turn_conversation"]

_LOG: Final = family_named("conversation.log").tail
_MESSAGE: Final = family_named("conversation.message").tail_prefix
_CHUNK: Final = 512
"""Messages looked up per batch."""


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
    conversation yet into it; the number copied. What is there already is found in a few round
    trips per conversation, not several per entry: the dream scheduler runs this at every start."""
    rows = [dict(entry) for entry in entries]
    there = _present(store, rows)
    return sum(mirror_turn(store, row) for n, row in enumerate(rows) if n not in there)


def _present(store: ConversationStore, rows: list[dict[str, Any]]) -> set[int]:
    """The numbers of the ``rows`` whose message is in one of their conversations already."""
    wanted: dict[str, list[tuple[int, str]]] = {}
    for n, row in enumerate(rows):
        message_id = _message_id(row)
        for conversation in candidates(str(row["session_id"]), row.get("subject")):
            wanted.setdefault(conversation, []).append((n, message_id))
    found: set[int] = set()
    for conversation, items in wanted.items():
        for start in range(0, len(items), _CHUNK):
            chunk = items[start : start + _CHUNK]
            held = _held(store, conversation, [message_id for _, message_id in chunk])
            found.update(n for (n, _), yes in zip(chunk, held, strict=True) if yes)
    return found


def _held(store: ConversationStore, conversation: str, message_ids: list[str]) -> list[bool]:
    """Whether each message is in ``conversation``: its position noted and a message there, as
    :meth:`ConversationStore.get` sees it (one batch of one conversation's keys: one cluster slot)."""
    base = CONVERSATION.render(store.engine.tag, conversation=conversation)
    with store.engine.batch() as positions:
        for message_id in message_ids:
            positions.get(base + _MESSAGE + message_id)
    assert positions.result is not None
    noted = [(i, int(p)) for i, p in enumerate(positions.result.results) if p is not None]
    held = [False] * len(message_ids)
    if noted:
        with store.engine.batch() as records:
            for _, position in noted:
                records.lindex(base + _LOG, position)
        assert records.result is not None
        for (i, _), record in zip(noted, records.result.results, strict=True):
            held[i] = record is not None
    return held
