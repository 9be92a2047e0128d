"""Remembered turns that are not searchable yet, so a crash never leaves them unsearchable.

``remember`` makes two writes: the append to the conversation (one atomic batch), then the
long-term entries that make each message searchable. Before the first, it notes in the user's hash
``subj:{user}:pending`` (family ``subject.pending``) the conversation and the position the append
starts at; after the last, it drops that note. A process that dies in between leaves the note, and
the user's next ``remember`` indexes the messages from that position first. Indexing again what
was indexed already writes nothing: a save of the words a current entry holds returns that entry.
Each call notes its own field (``{conversation}\\t{position}``), so two concurrent calls never drop
each other's notes.

A note holds the time it was taken. A note younger than :data:`GRACE` may belong to a call still
running in another process, so a remember leaves it alone: two calls indexing the same turns at
once could both find no entry saying those words yet, and index them twice. A note of a call
that died is repaired by the user's first remember after the grace (that call was never
acknowledged, so nothing promised is late).
"""

from __future__ import annotations

from typing import Final

from ...engines.base import Engine
from ...foundation.keyspace import family_named

__all__ = ["GRACE", "done", "note", "notes", "pending_key"]

_PENDING: Final = family_named("subject.pending")

GRACE: Final = 60.0
"""Seconds a note is left to the call that took it (a remember of a few messages takes well
under a second; an embedder's first load a few)."""


def pending_key(engine: Engine, user: str) -> str:
    """The hash of one user's notes."""
    return _PENDING.key(engine.tag, subject=user)


def _field(conversation: str, start: int) -> str:
    return f"{conversation}\t{start}"


def note(engine: Engine, user: str, conversation: str, start: int) -> None:
    """Note that messages of ``conversation`` from position ``start`` are being made searchable,
    and when (the engine's clock)."""
    engine.hset(pending_key(engine, user), {_field(conversation, start): repr(engine.clock.now())})


def done(engine: Engine, user: str, conversation: str, start: int) -> None:
    """Drop the note: those messages are searchable."""
    engine.hdel(pending_key(engine, user), _field(conversation, start))


def notes(engine: Engine, user: str, *, older_than: float | None = None) -> list[tuple[str, int]]:
    """The user's notes left by calls that did not finish (or are running), oldest first; with
    ``older_than``, only those taken by that time (a note without a time counts as old)."""
    found = []
    for name, noted in engine.hgetall(pending_key(engine, user)).items():
        conversation, _, start = name.rpartition("\t")
        if conversation and start.isdigit() and (older_than is None or _time(noted) <= older_than):
            found.append((conversation, int(start)))
    return sorted(found, key=lambda n: (n[1], n[0]))


def _time(noted: str) -> float:
    try:
        return float(noted)
    except ValueError:  # an unreadable time: the note is old, repair it
        return float("-inf")
