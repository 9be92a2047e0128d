"""``TurnMemory``: per-session conversation turns and the turn log (RockBot conversation tier).

Each session keeps its last ``max_turns_per_session`` turns (50: a sliding window of messages,
oldest evicted, as RockBot); ``recent()`` gives the injection window (the last 20). Every
added turn is also appended to the turn log, an append-only list of
``{session_id, role, content, timestamp, message_id}`` that the dream passes replay (the extract
pass cites ``message_id`` as the provenance of what it learns); it can be mirrored to a JSONL file.
Sessions idle for ``idle_timeout`` seconds expire (engine TTL refreshed on every add and read;
RockBot's idle timeout is one hour).

Every key shares one hash tag, so a turn, its log entry and the session index are written in ONE
batch, also on Redis Cluster (the price: the whole tier lives in one cluster slot); the layout
comes from the keyspace registry::

    turns:{turns}:s:{session_id}     list    the session's turns (JSON)      turns.session
    turns:{turns}:sessions           set     session ids                     turns.sessions
    turns:{turns}:log                list    the turn log                    turns.log
    turns:{turns}:log:forget-lease   string  a forget's rewrite lock         turns.lease
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ...engines.base import Engine
from ...foundation import limits
from ...foundation.errors import InvalidConfiguration, InvalidSessionId, InvalidValue
from ...foundation.forks import renew_in_children
from ...foundation.keyspace import check_subject, family_named, labelled, register
from ...foundation.keyspace.families import TURNS
from ...foundation.limits import check_match, short_repr
from ...foundation.timefmt import iso_utc
from .turn_ids import MESSAGE_ID_RULE, message_id_of

__all__ = ["MESSAGE_ID_RULE", "SESSION_RULE", "Turn", "TurnMemory", "message_id_of"]

PREFIX: Final = TURNS.lead
_SESSION_LIST: Final = family_named("turns.session").tail_prefix
_SESSIONS, _LOG = family_named("turns.sessions").tail, family_named("turns.log").tail
_LEASE: Final = family_named("turns.lease").tail
SESSION_RULE: Final = re.compile(r"[A-Za-z0-9_./@:-]{1,256}")  # RockBot ids may hold "/" (sub-directories)


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn: who said what, when (engine-clock seconds)."""

    role: str
    content: str
    timestamp: float

    def to_dict(self) -> dict[str, Any]:
        """JSON form with an ISO-8601 UTC ``timestamp``."""
        when = iso_utc(self.timestamp)
        return {"role": self.role, "content": self.content, "timestamp": when}


class TurnMemory:
    """Turns per session plus the turn log, on one engine.

    Args:
        engine: the storage engine.
        max_turns_per_session: retention per session (oldest evicted).
        context_turns: default size of :meth:`recent`.
        log: also append every turn to the turn log.
        log_path: also mirror log entries to this JSONL file (one JSON object per line).
        idle_timeout: seconds without add or read after which a session expires (None: never).

    Raises:
        InvalidConfiguration: a limit below 1, or a timeout that is not a number of seconds
            greater than 0 and at most ten years.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        max_turns_per_session: int = 50,
        context_turns: int = 20,
        log: bool = True,
        log_path: str | Path | None = None,
        idle_timeout: float | None = 3600.0,
    ) -> None:
        for name, value in (
            ("max_turns_per_session", max_turns_per_session),
            ("context_turns", context_turns),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limits.MAX_COUNT:
                raise InvalidConfiguration(f"{name} {short_repr(value)}: must be an int >= 1 (at most 2**53)")
        if idle_timeout is not None and (
            isinstance(idle_timeout, bool)
            or not isinstance(idle_timeout, int | float)
            or not 0 < idle_timeout <= limits.MAX_TTL_SECONDS
        ):
            raise InvalidConfiguration(
                f"idle_timeout {short_repr(idle_timeout)}: must be > 0 (at most ten years) or None"
            )
        self.engine = engine
        self.max_turns_per_session = max_turns_per_session
        self.context_turns = context_turns
        self.log = log
        self.log_path = Path(log_path) if log_path is not None else None
        self.idle_timeout = idle_timeout
        self._base = TURNS.render(engine.tag)
        self._file_lock = threading.Lock()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """In a forked child: a new file lock (a parent thread appending at the fork held it)."""
        self._file_lock = threading.Lock()

    @property
    def log_key(self) -> str:
        """The shared turn-log list (for :mod:`memstack.services.lifecycle`)."""
        return self._base + _LOG

    @property
    def lease_key(self) -> str:
        """The lock of a rewrite of the log (for :mod:`memstack.services.lifecycle`)."""
        return self._base + _LEASE

    @property
    def sessions_key(self) -> str:
        """The set of session ids with turns (for :mod:`memstack.services.lifecycle`)."""
        return self._base + _SESSIONS

    def session_key(self, session_id: str) -> str:
        """The list of one session's turns.

        Raises:
            InvalidSessionId: a malformed session id.
        """
        return self._key(session_id)

    def _key(self, session_id: str) -> str:
        check_match(
            session_id, SESSION_RULE, "session_id", "1-256 characters of [A-Za-z0-9_./@:-]", InvalidSessionId
        )
        return f"{self._base}{_SESSION_LIST}{session_id}"

    def _ttl_ms(self) -> int | None:
        return None if self.idle_timeout is None else int(self.idle_timeout * 1000)

    def add(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        subject: str | None = None,
        message_id: str | None = None,
    ) -> Turn:
        """Append a turn (and its log entry) in one batch; evict the oldest beyond the retention.

        ``subject``: the end user the session is about (:mod:`memstack.foundation.keyspace.subjects`): a
        ``forget(subject=…)`` then forgets the whole session in every tier. ``message_id``: the
        turn's id in the log (e.g. the message id of a conversation store; default: a fresh one),
        which the extract pass cites as provenance.

        Raises:
            InvalidSessionId: a malformed session id.
            InvalidValue: an empty role or non-string content, a lone surrogate in either, a role
                over 256 bytes or content over 1 MiB (the message names the field), a bad subject
                or message id.
        """
        key = self._key(session_id)
        if subject is not None:
            check_subject(subject)
        if message_id is None:
            message_id = uuid.uuid4().hex[:12]
        elif not isinstance(message_id, str) or not MESSAGE_ID_RULE.fullmatch(message_id):
            raise InvalidValue(
                f"message_id {short_repr(message_id)}: must be 1-128 characters of [A-Za-z0-9_.:@-]"
            )
        if not isinstance(role, str) or not role:
            raise InvalidValue(f"role {short_repr(role)}: must be a non-empty string")
        if not isinstance(content, str):
            raise InvalidValue(f"content {short_repr(content)}: must be a string")
        limits.check_text(role, "role", max_bytes=256)
        limits.check_text(content, "content", max_bytes=limits.MAX_VALUE_BYTES)
        turn = Turn(role, content, self.engine.clock.now())
        record = json.dumps(
            {"role": role, "content": content, "timestamp": turn.timestamp}, ensure_ascii=False
        )
        entry = labelled(
            {
                "session_id": session_id,
                "role": role,
                "content": content,
                "timestamp": turn.timestamp,
                "message_id": message_id,
            },
            subject,  # what is learnt from the turn is theirs too (the extract pass labels it)
        )
        entry_text = json.dumps(entry, ensure_ascii=False)
        from .store import ConversationStore  # the store imports this module's message ids
        from .turn_source import mirror_turn

        # The conversation first: the passes read turns there, and a crash after it loses no turn.
        mirror_turn(ConversationStore(self.engine), entry)
        with self.engine.batch() as batch:
            register(self.engine, batch, subject, "session", session_id)
            batch.rpush(key, record)
            batch.ltrim(key, -self.max_turns_per_session, -1)
            ttl = self._ttl_ms()
            if ttl is not None:
                batch.pexpire(key, ttl)
            batch.sadd(self._base + _SESSIONS, session_id)
            if self.log:
                batch.rpush(self._base + _LOG, entry_text)
        if self.log and self.log_path is not None:
            with self._file_lock, self.log_path.open("a", encoding="utf-8") as handle:
                handle.write(entry_text + "\n")
        return turn

    def turns(self, session_id: str) -> list[Turn]:
        """The session's turns, oldest first (unknown or expired session → [])."""
        return self._read(session_id, 0)

    def recent(self, session_id: str, n: int | None = None) -> list[Turn]:
        """The last ``n`` turns (default ``context_turns``), oldest first.

        Raises:
            InvalidValue: ``n`` below 1 or above 2**53.
        """
        count = self.context_turns if n is None else n
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= limits.MAX_COUNT:
            raise InvalidValue(f"n {short_repr(n)}: must be an int >= 1 (at most 2**53)")
        return self._read(session_id, -count)

    def _read(self, session_id: str, start: int) -> list[Turn]:
        key = self._key(session_id)
        with self.engine.batch() as batch:
            batch.lrange(key, start, -1)
            ttl = self._ttl_ms()
            if ttl is not None:
                batch.pexpire(key, ttl)  # a read is an access, as RockBot's GetTurnsAsync
        assert batch.result is not None
        return [Turn(**json.loads(record)) for record in batch.result.results[0]]

    def clear(self, session_id: str) -> bool:
        """Remove a session's turns (the log keeps its entries); True if it existed."""
        key = self._key(session_id)
        with self.engine.batch() as batch:
            batch.delete(key)
            batch.srem(self._base + _SESSIONS, session_id)
        assert batch.result is not None
        return bool(batch.result.results[0])

    def sessions(self) -> list[str]:
        """Ids of the live sessions, sorted (expired ones are skipped; :meth:`prune` drops them)."""
        ids = sorted(self.engine.smembers(self._base + _SESSIONS))
        if not ids:
            return []
        with self.engine.batch() as batch:
            for session_id in ids:
                batch.exists(self._key(session_id))
        assert batch.result is not None
        gone = {s for s, live in zip(ids, batch.result.results, strict=True) if not live}
        return [s for s in ids if s not in gone]  # a read: prune() removes the expired ids

    def prune(self) -> int:
        """Drop expired sessions from the index; returns how many (a write, run by the retention
        sweep: reads never write)."""
        ids = sorted(self.engine.smembers(self._base + _SESSIONS))
        live = set(self.sessions())
        gone = [s for s in ids if s not in live]
        return int(self.engine.srem(self._base + _SESSIONS, *gone)) if gone else 0

    def log_entries(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Turn-log entries, oldest first; ``limit``: only the last ``limit`` ones.

        Raises:
            InvalidValue: ``limit`` not None nor an int from 1 to 2**53.
        """
        if limit is not None:
            limits.check_int(limit, "limit", minimum=1)
        start = 0 if limit is None else -limit
        return [json.loads(r) for r in self.engine.lrange(self._base + _LOG, start, -1)]

    def migrate(self) -> int:
        """Copy the turn log's entries that are in no conversation yet (logged before turns went
        to conversations) into their conversations, with their time, message id and subject
        (:mod:`memstack.tiers.conversation.turn_source`); the number copied. Running it again
        copies nothing."""
        from .store import ConversationStore  # the store imports this module's message ids
        from .turn_source import migrate_turn_log

        return migrate_turn_log(self.log_entries(), ConversationStore(self.engine))

    def clear_log(self) -> int:
        """Empty the turn log (the JSONL mirror is left alone); returns how many entries it held."""
        with self.engine.batch() as batch:
            batch.llen(self._base + _LOG)
            batch.delete(self._base + _LOG)
        assert batch.result is not None
        return int(batch.result.results[0])
