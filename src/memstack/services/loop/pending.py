"""Remembered turns that are not searchable yet, so a crash never leaves them unsearchable.

``remember`` makes two writes: the append to the conversation (one atomic batch), then the
long-term entries that make each message searchable. Before the first, it notes in the user's hash
``subj:{user}:pending`` (family ``subject.pending``) the conversation and the position the append
starts at; after the last, it drops that note. A process that dies in between leaves the note, and
the user's next ``remember`` indexes the messages from that position first. Indexing again what
was indexed already writes nothing: a save of the words a current entry holds returns that entry.
Each call notes its own field (``{conversation}\\t{position}``), so two concurrent calls never drop
each other's notes.
"""

from __future__ import annotations

from typing import Final

from ...engines.base import Engine
from ...foundation.keyspace import family_named

__all__ = ["done", "note", "notes", "pending_key"]

_PENDING: Final = family_named("subject.pending")


def pending_key(engine: Engine, user: str) -> str:
    """The hash of one user's notes."""
    return _PENDING.key(engine.tag, subject=user)


def _field(conversation: str, start: int) -> str:
    return f"{conversation}\t{start}"


def note(engine: Engine, user: str, conversation: str, start: int) -> None:
    """Note that messages of ``conversation`` from position ``start`` are being made searchable."""
    engine.hset(pending_key(engine, user), {_field(conversation, start): "1"})


def done(engine: Engine, user: str, conversation: str, start: int) -> None:
    """Drop the note: those messages are searchable."""
    engine.hdel(pending_key(engine, user), _field(conversation, start))


def notes(engine: Engine, user: str) -> list[tuple[str, int]]:
    """The user's notes left by calls that did not finish (or are running), oldest first."""
    found = []
    for name in engine.hgetall(pending_key(engine, user)):
        conversation, _, start = name.rpartition("\t")
        if conversation and start.isdigit():
            found.append((conversation, int(start)))
    return sorted(found, key=lambda n: (n[1], n[0]))
