"""``DreamScheduler``: dream passes in the background of a service, one scope at a time.

Every ``interval`` seconds each scope of the engine's long-term tier is due. A due scope whose
user was active in the last :data:`ACTIVITY_WINDOW` seconds (a turn in the turn log, or a change
to the scope) waits, checked again every :data:`POLL` seconds (spec 63). A pass holds the scope's
lease in the engine, so several service processes on one engine never run two passes on one
scope at the same time; a scope whose lease is held elsewhere is retried at the next poll.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ...foundation.errors import Conflict, MemstackError
from ...foundation.keyspace import family_of
from ...llm.chat import ChatModel
from ...tiers.longterm.layout import PREFIX
from .driver import PASSES, Dreamer
from .record import DreamRecord

if TYPE_CHECKING:
    from ..tiers import Tiers

__all__ = ["ACTIVITY_WINDOW", "POLL", "DreamScheduler"]

log = logging.getLogger("memstack.services.dream")

ACTIVITY_WINDOW: Final = 30.0
"""A scope whose user was active this recently (seconds) is left alone for now."""
POLL: Final = 5.0
"""Seconds between checks of a scope that is due but busy."""


class DreamScheduler:
    """Runs ``passes`` over every long-term scope of ``memory`` every ``interval`` seconds.

    Args:
        memory: the memory (its tiers) whose long-term scopes are dreamt over.
        interval: seconds between two passes over one scope.
        model: the chat model of the LLM passes (None: only ``dedupe`` can run).
        passes: any of :data:`~memstack.services.dream.driver.PASSES` (``extract`` turns the new
            conversation turns into memories); default ``("consolidate",)`` with a model,
            ``("dedupe",)`` without.

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
        self._next: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def scopes(self) -> list[str]:
        """The long-term scopes of the engine, sorted."""
        found = set()
        for key in self.memory.engine.scan(PREFIX):
            family = family_of(key)[1]
            if family is not None and family[0].name == "long_term.ids":
                found.add(family[1]["scope"])
        return sorted(found)

    def active(self, scope: str) -> bool:
        """Whether the scope's user did something in the last :data:`ACTIVITY_WINDOW` seconds."""
        now = self.memory.clock.now()
        last = self.memory.turns.log_entries(limit=1)
        if last and now - float(last[-1]["timestamp"]) < ACTIVITY_WINDOW:
            return True
        recent = self.memory.long_term(scope).search(None, max_results=1)
        return bool(recent) and now - recent[0].entry.last_changed.timestamp() < ACTIVITY_WINDOW

    def run_once(self) -> list[DreamRecord]:
        """One round: every due, idle scope gets its passes; returns the records written."""
        now = self.memory.clock.now()
        done: list[DreamRecord] = []
        for scope in self.scopes():
            if self._next.get(scope, now) > now:
                continue
            if self.active(scope):
                self._next[scope] = now + POLL
                continue
            dreamer = Dreamer(self.memory.long_term(scope), model=self.model, turns=self.memory.turns)
            try:
                done += dreamer.run(self.passes)
            except Conflict as exc:  # another process holds the lease, or the scope kept changing
                log.info("dream: scope %r busy (%s); retrying", scope, exc)
                self._next[scope] = now + POLL
                continue
            except MemstackError as exc:  # a refused plan, an engine hiccup: try again next interval
                log.warning("dream: scope %r: %s: %s", scope, type(exc).__name__, exc)
            self._next[scope] = now + self.interval
        return done

    # -- background thread ---------------------------------------------------------------
    def start(self) -> None:
        """Run rounds in a daemon thread every :data:`POLL` seconds until :meth:`stop`."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="memstack-dream", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:  # the service must outlive a failing round; the log keeps the trace
                log.exception("dream round failed")
            self._stop.wait(POLL)

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the thread (after its current pass)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
