"""``DreamScheduler``: dream passes in the background of a service, one user or scope at a time.

The passes that read a user's turns (``extract``, ``preferences``) run per USER, and only for a
user with turns their passes have not read: the users come from the index every labelled
conversation append keeps (:mod:`memstack.tiers.conversation.activity`), so a user who has a
conversation but no long-term scope yet is found, and finding who is due reads one small hash per
user, no conversation. A user's passes write to the scope named after them.

The other passes (``consolidate``, ``dedupe``) run per long-term scope, every ``interval``
seconds.

Either waits while its user is active: a turn of that user (or a change to the scope) less than
``quiet`` seconds ago (default :data:`ACTIVITY_WINDOW`, or the interval when shorter). Another
user's turn delays nobody else. A pass holds the scope's lease in the engine, so several service
processes on one engine never run two passes on one scope at the same time; a scope whose lease is
held elsewhere is retried at the next poll.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ...foundation.errors import Conflict, MemstackError
from ...foundation.keyspace import family_of
from ...llm.chat import ChatModel
from ...tiers.conversation.activity import activity, users_with_turns
from ...tiers.longterm.layout import PREFIX
from ...tiers.longterm.validate import SCOPE_RULE
from ..rounds import Rounds
from . import cursor
from .driver import PASSES, Dreamer
from .keys import DreamKeys
from .record import DreamRecord

if TYPE_CHECKING:
    from ..tiers import Tiers

__all__ = ["ACTIVITY_WINDOW", "POLL", "USER_PASSES", "DreamScheduler"]

log = logging.getLogger("memstack.services.dream")

ACTIVITY_WINDOW: Final = 30.0
"""A scope whose user was active this recently (seconds) is left alone for now."""
POLL: Final = 5.0
"""Seconds between checks of a scope that is due but busy."""
USER_PASSES: Final = ("extract", "preferences")
"""The passes that read a user's turns: scheduled per user with new turns."""


class DreamScheduler:
    """Runs ``passes`` over every long-term scope of ``memory`` every ``interval`` seconds.

    Args:
        memory: the memory (its tiers) whose long-term scopes are dreamt over.
        interval: seconds between two passes over one scope.
        model: the chat model of the LLM passes (None: only ``dedupe`` can run).
        passes: any of :data:`~memstack.services.dream.driver.PASSES` (``extract`` turns the new
            conversation turns into memories); default ``("consolidate",)`` with a model,
            ``("dedupe",)`` without.
        quiet: seconds a user must have been idle before their passes run (default the smaller
            of :data:`ACTIVITY_WINDOW` and ``interval``).

    Raises:
        InvalidConfiguration: ``interval`` <= 0, an unknown pass, or a pass that needs a model
            without one.
    """

    def __init__(
        self,
        memory: Tiers,
        interval: float,
        *,
        model: ChatModel | None = None,
        passes: Sequence[str] | None = None,
        quiet: float | None = None,
    ) -> None:
        from ...foundation.errors import InvalidConfiguration

        if not interval > 0:
            raise InvalidConfiguration(f"dream interval {interval!r}: must be > 0 seconds")
        self.memory, self.interval, self.model = memory, float(interval), model
        self.passes = tuple(passes) if passes else (("consolidate",) if model is not None else ("dedupe",))
        for name in self.passes:
            if name not in PASSES:
                raise InvalidConfiguration(f"dream pass {name!r}: must be one of {', '.join(PASSES)}")
            if name != "dedupe" and model is None:
                raise InvalidConfiguration(f"dream pass {name!r} needs a chat model (MEMSTACK_CHAT_*)")
        self.quiet = min(ACTIVITY_WINDOW, self.interval) if quiet is None else float(quiet)
        self.poll = min(POLL, self.interval)
        self._next: dict[tuple[str, str], float] = {}
        self._ran: dict[str, float] = {}
        self._rounds = Rounds("memstack-dream", self.run_once, self.poll, log, "dream round failed")

    def scopes(self) -> list[str]:
        """The long-term scopes of the engine, sorted."""
        found = set()
        for key in self.memory.engine.scan(PREFIX):
            family = family_of(key)[1]
            if family is not None and family[0].name == "long_term.ids":
                found.add(family[1]["scope"])
        return sorted(found)

    def users(self) -> list[str]:
        """The users with a labelled conversation turn, sorted."""
        return users_with_turns(self.memory.engine)

    def latest_turn(self, user: str) -> float | None:
        """The time of the user's newest conversation turn (None: none known)."""
        newest = activity(self.memory.engine, user)
        return max(newest.values()) if newest else None

    def unread(self, user: str, latest: float) -> bool:
        """Whether a user pass of the scheduler has not read the user's turn of time ``latest``."""
        engine = self.memory.engine
        keys = DreamKeys.of(engine, user)
        for name in self.passes:
            if name not in USER_PASSES:
                continue
            read, _ = cursor.read(engine, user, key=None if name == "extract" else keys.pref_cursor)
            if read.again or read.at is None or latest > read.at:
                return True
            # Turns written together share a time: a capped pass may have left some at ``at``.
            if latest == read.at and self._ran.get(user) != latest:
                return True
        return False

    def active(self, scope: str) -> bool:
        """Whether the scope's user did something in the last ``quiet`` seconds: a turn of theirs,
        or a change to the scope."""
        now = self.memory.clock.now()
        latest = self.latest_turn(scope)
        if latest is not None and now - latest < self.quiet:
            return True
        recent = self.memory.long_term(scope).search(None, max_results=1)
        return bool(recent) and now - recent[0].entry.last_changed.timestamp() < self.quiet

    def run_once(self) -> list[DreamRecord]:
        """One round: every user with unread turns who is idle gets the user passes, then every
        due, idle scope the other passes; returns the records written."""
        now = self.memory.clock.now()
        done: list[DreamRecord] = []
        per_user = [p for p in self.passes if p in USER_PASSES]
        per_scope = [p for p in self.passes if p not in USER_PASSES]
        if per_user:
            for user in self.users():
                done += self._user_round(user, per_user, now)
        if per_scope:
            for scope in self.scopes():
                if self._next.get(("scope", scope), now) > now:
                    continue
                if self.active(scope):
                    self._next[("scope", scope)] = now + self.poll
                    continue
                done += self._run(("scope", scope), scope, None, per_scope, now)
        return done

    def _user_round(self, user: str, passes: list[str], now: float) -> list[DreamRecord]:
        if self._next.get(("user", user), now) > now or not SCOPE_RULE.fullmatch(user):
            return []
        latest = self.latest_turn(user)
        if latest is None or not self.unread(user, latest):
            return []
        if now - latest < self.quiet:  # debounced: the user is still talking
            self._next[("user", user)] = latest + self.quiet
            return []
        done = self._run(("user", user), user, user, passes, now)
        self._ran[user] = latest
        return done

    def _run(
        self, key: tuple[str, str], scope: str, user: str | None, passes: list[str], now: float
    ) -> list[DreamRecord]:
        dreamer = Dreamer.over(self.memory, scope, model=self.model, user=user)
        done: list[DreamRecord] = []
        try:
            done = dreamer.run(passes)
        except Conflict as exc:  # another process holds the lease, or the scope kept changing
            log.info("dream: scope %r busy (%s); retrying", scope, exc)
            self._next[key] = now + self.poll
            return done
        except MemstackError as exc:  # a refused plan, an engine hiccup: try again next interval
            log.warning("dream: scope %r: %s: %s", scope, type(exc).__name__, exc)
        self._next[key] = now + self.interval
        return done

    # -- background thread ---------------------------------------------------------------
    def start(self) -> None:
        """Copy the turn log's older entries into conversations
        (:mod:`memstack.tiers.conversation.turn_source`), then run rounds in a daemon thread
        every ``poll`` seconds (:data:`POLL`, or the interval when shorter) until :meth:`stop`."""
        if self._rounds.running:
            return
        # Turn-log entries logged before turns went to conversations: copied once (idempotent).
        self.memory.turns.migrate()
        self._rounds.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the thread (after its current pass)."""
        self._rounds.stop(timeout)
