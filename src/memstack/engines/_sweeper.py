"""The background sweep of expired keys, one daemon thread per engine (memory, SQLite, PostgreSQL).

A round that meets a busy engine is skipped (the next round finds the same keys); any other engine
error is logged and the thread carries on; the thread ends when the engine is closed. A child made
by ``fork`` starts its own thread at once (see :mod:`._forks`), as a newly opened engine does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..foundation.errors import EngineClosed, EngineError, EngineUnavailable
from ._dispatch import join_unless_current
from ._forks import renew_in_children

__all__ = ["Sweeper"]

log = logging.getLogger("memstack.engines")


class Sweeper:
    """The thread ``memstack-{engine}-sweep`` calling ``sweep()`` every ``interval`` seconds until
    ``closed`` is set (``label`` names the store in the log); no thread when ``interval`` is None."""

    def __init__(
        self,
        engine: str,
        closed: threading.Event,
        interval: float | None,
        sweep: Callable[[], object],
        label: str,
    ) -> None:
        self._name = f"memstack-{engine}-sweep"
        self._closed = closed
        self._interval = interval
        self._sweep = sweep
        self._label = label
        self._thread: threading.Thread | None = None
        self.renew_in_child()
        renew_in_children(self)

    def renew_in_child(self) -> None:
        """Start a thread of this process (also the first one)."""
        self._thread = None
        if self._interval is not None and not self._closed.is_set():
            self._thread = threading.Thread(
                target=self._loop, args=(self._interval,), name=self._name, daemon=True
            )
            self._thread.start()

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
