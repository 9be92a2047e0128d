"""The background sweep of expired keys, one daemon thread per engine (memory, SQLite, PostgreSQL).

A round that meets a busy engine is skipped (the next round finds the same keys); any other engine
error is logged and the thread carries on; the thread ends when the engine is closed. In a child
made by ``fork`` (see :mod:`~memstack.foundation.forks`) the engine starts its own thread on its first
call (:meth:`Sweeper.ensure`), so a child that never uses the engine, or execs at once, starts none.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..foundation.errors import EngineClosed, EngineError, EngineUnavailable
from ..foundation.forks import Flag, renew_in_children
from ._dispatch import join_unless_current

__all__ = ["Sweeper"]

log = logging.getLogger("memstack.engines")


class Sweeper:
    """The thread ``memstack-{engine}-sweep`` calling ``sweep()`` every ``interval`` seconds until
    ``closed`` is set (``label`` names the store in the log); no thread when ``interval`` is None."""

    def __init__(
        self,
        engine: str,
        closed: Flag,
        interval: float | None,
        sweep: Callable[[], object],
        label: str,
    ) -> None:
        self._name = f"memstack-{engine}-sweep"
        self._closed = closed
        self._interval = interval
        self._sweep = sweep
        self._label = label
        self._renew_in_child()
        self.ensure()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """No thread (the parent's is not this process's) and a new lock: :meth:`ensure` starts one."""
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._due = self._interval is not None

    def ensure(self) -> None:
        """Start this process's thread unless it runs already or the engine is closed (the engine
        calls this on every command: one attribute read once the thread runs)."""
        if not self._due:
            return
        with self._lock:
            if self._due and self._interval is not None and not self._closed.is_set():
                self._thread = threading.Thread(
                    target=self._loop, args=(self._interval,), name=self._name, daemon=True
                )
                self._thread.start()
            self._due = False

    def join(self) -> None:
        """Wait for the thread to end (after ``closed`` was set), unless the caller is that thread."""
        join_unless_current(self._thread)

    def _loop(self, interval: float) -> None:
        while not self._closed.wait(interval):
            try:
                self._sweep()
            except EngineClosed:
                return
            except EngineUnavailable:
                log.debug("background sweep of %s skipped: the engine is busy or unreachable", self._label)
            except EngineError:
                log.warning("background sweep of %s failed", self._label, exc_info=True)
