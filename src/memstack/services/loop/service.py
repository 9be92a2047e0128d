"""``MemoryLoop``: remember a user's messages, recall what is known about them (see the package).

A user's long-term memories live in the scope named after them, and every record the loop writes
for them is labelled with them (``subject``), so ``forget(subject=user)`` finds it all. Their
messages go to a conversation registered for them; a conversation that holds messages of another
user, or of nobody, is refused: the extract pass of a user reads exactly their conversations.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from ...foundation.errors import AlreadyExists, Conflict, InvalidConfiguration, InvalidValue, MemstackError
from ...foundation.keyspace import check_subject
from ...foundation.limits import short_repr
from ...llm.chat import ChatModel
from ...tiers.conversation.message import CONVERSATION_RULE, Message
from ...tiers.longterm import MemoryEntry
from ...tiers.longterm.provenance import conversation_metadata
from ...tiers.longterm.validate import check_scope
from ..dream import Dreamer
from ..dream.record import DreamRecord
from ..dream.sources import user_conversations
from ..rounds import Rounds
from . import pending
from .recall import TURN_SOURCE, Recalled, recalled

if TYPE_CHECKING:
    from ..tiers import Tiers

__all__ = ["DEBOUNCE", "MemoryLoop", "Remembered"]

log = logging.getLogger("memstack.services.loop")

DEBOUNCE: Final = 30.0
"""Seconds without a new message of a user before their extract pass runs."""
POLL: Final = 1.0
"""Seconds between two looks of the background thread at the due passes."""


@dataclass(frozen=True, slots=True)
class Remembered:
    """What ``remember`` did: the conversation, the messages appended, the entries that make them
    searchable (one per message; a message saying what an entry of the scope already says gets
    that entry), and whether an extract pass is queued."""

    user: str
    conversation: str
    messages: tuple[Message, ...]
    entries: tuple[MemoryEntry, ...]
    queued: bool


def default_conversation(user: str) -> str:
    """The conversation of ``user`` when none is named: their name when it is a valid
    conversation id, else a digest of it."""
    if CONVERSATION_RULE.fullmatch(user) and len(user) <= 120:
        return f"user-{user}"
    return "user-" + hashlib.sha256(user.encode()).hexdigest()[:32]


def _drafts(messages: object) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if not isinstance(messages, Sequence) or not messages:
        raise InvalidValue(f"messages {short_repr(messages)}: must be a text or a non-empty list of messages")
    drafts = []
    for n, message in enumerate(messages):
        if not isinstance(message, Mapping) or not {"role", "content"} <= set(message):
            raise InvalidValue(
                f"messages[{n}] {short_repr(message)}: must be a mapping with role and content"
            )
        drafts.append(dict(message))
    return drafts


class MemoryLoop:
    """The loop over the tiers of ``memory``.

    Args:
        memory: the tiers (a :class:`~memstack.Memory`).
        model: the chat model of the extract pass (None: turns are searchable, nothing is extracted).
        debounce: seconds without a new message of a user before their extract pass is due.

    Raises:
        InvalidConfiguration: a debounce below 0.
    """

    def __init__(self, memory: Tiers, *, model: ChatModel | None = None, debounce: float = DEBOUNCE) -> None:
        if isinstance(debounce, bool) or not isinstance(debounce, int | float) or not debounce >= 0:
            raise InvalidConfiguration(f"debounce {short_repr(debounce)}: must be a number of seconds >= 0")
        self.memory, self.model, self.debounce = memory, model, float(debounce)
        self._due: dict[str, float] = {}
        self._lock = threading.Lock()
        self._rounds = Rounds("memstack-loop", self.run_due, POLL, log, "loop: extract round failed")

    # -- remember ----------------------------------------------------------------------------
    def remember(self, messages: object, *, user: str, conversation: str | None = None) -> Remembered:
        """Append ``messages`` (a text: one user message; or mappings with ``role``, ``content``,
        optionally ``message_id``) to ``user``'s ``conversation`` (default: theirs) and make each
        searchable in their scope at once; with a model, queue their extract pass.

        Raises:
            InvalidValue, InvalidKey, InvalidSessionId: a bad user, conversation or message.
            AlreadyExists: a message id already in the conversation, or a conversation that is
                not this user's (it holds messages of another user or of nobody).
        """
        check_scope(check_subject(user))
        drafts = _drafts(messages)
        conversation_id = default_conversation(user) if conversation is None else conversation
        store = self.memory.conversations
        start = store.count(conversation_id)
        if start and conversation_id not in user_conversations(self.memory.engine, user):
            raise AlreadyExists(
                f"conversation {conversation_id!r}: holds messages of another user or of nobody"
            )
        engine = self.memory.engine
        # A call that died before indexing; a younger note may be a call still running.
        for earlier, position in pending.notes(engine, user, older_than=engine.clock.now() - pending.GRACE):
            self._index(user, earlier, store.messages(earlier, position), position)
            pending.done(engine, user, earlier, position)
        pending.note(engine, user, conversation_id, start)
        try:
            appended = store.extend(conversation_id, drafts, subject=user)
        except MemstackError:  # the append is one batch: refused, nothing of it was written
            pending.done(engine, user, conversation_id, start)
            raise
        entries = self._index(user, conversation_id, appended, start)
        pending.done(engine, user, conversation_id, start)
        queued = self.model is not None
        if queued:
            with self._lock:
                self._due[user] = self.memory.clock.now() + self.debounce
        return Remembered(user, conversation_id, tuple(appended), tuple(entries), queued)

    def _index(
        self, user: str, conversation_id: str, messages: Sequence[Message], start: int
    ) -> list[MemoryEntry]:
        """Make ``messages`` (from position ``start`` of the conversation) searchable in the
        user's scope; a message already indexed gets its entry back, nothing written."""
        memory = self.memory.long_term(user)
        entries = []
        for position, message in enumerate(messages, start):
            when = datetime.fromtimestamp(message.created_at, UTC)
            metadata = {
                **conversation_metadata(conversation_id, position, message.role, when),
                "source": TURN_SOURCE,
                "message_ids": [message.message_id],
            }
            entries.append(
                memory.save(content=f"{message.role}: {message.content}", metadata=metadata, subject=user)
            )
        return entries

    # -- recall ------------------------------------------------------------------------------
    def recall(self, query: str, *, user: str, limit: int = 10) -> list[Recalled]:
        """The best ``limit`` memories, extracted facts and turns of ``user`` for ``query``, each
        with its provenance.

        Raises:
            InvalidValue, InvalidKey: a bad user, query or limit.
        """
        scope = check_scope(check_subject(user))
        hits = self.memory.long_term(scope).search(query, limit=limit)
        return [recalled(hit) for hit in hits]

    # -- the extract passes --------------------------------------------------------------------
    def due(self) -> list[str]:
        """The users whose extract pass is due now (no new message for ``debounce`` seconds)."""
        now = self.memory.clock.now()
        with self._lock:
            return sorted(u for u, at in self._due.items() if at <= now)

    def run_due(self) -> list[DreamRecord]:
        """Run the extract pass of every due user (each in their own scope, reading only their
        turns); a pass whose scope is busy is tried again at the next look."""
        done: list[DreamRecord] = []
        for user in self.due():
            with self._lock:
                self._due.pop(user, None)
            dreamer = Dreamer.over(self.memory, user, model=self.model, user=user)
            try:
                done += dreamer.run(["extract"])
            except Conflict as exc:  # another process holds the scope's lease: next look
                log.info("loop: extract of %r busy (%s); retrying", user, exc)
                with self._lock:
                    self._due.setdefault(user, self.memory.clock.now())
            except MemstackError as exc:  # a refused plan, an engine hiccup: the next message queues again
                log.warning("loop: extract of %r: %s: %s", user, type(exc).__name__, exc)
        return done

    def start(self) -> None:
        """Run the due passes in a daemon thread every :data:`POLL` seconds until :meth:`stop`
        (a no-op without a model)."""
        if self.model is not None:
            self._rounds.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the background thread (after its current pass)."""
        self._rounds.stop(timeout)

    def close(self) -> None:
        """Stop the background thread (the memory closing calls it)."""
        self.stop()
