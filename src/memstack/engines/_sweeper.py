"""The background sweep of expired keys, one daemon thread per engine (memory, SQLite, PostgreSQL).

A round that meets a busy engine is skipped (the next round finds the same keys); any other engine
error is logged and the thread carries on; the thread ends when the engine is closed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..foundation.errors import EngineClosed, EngineError, EngineUnavailable

__all__ = ["start_sweeper"]

log = logging.getLogger("memstack.engines")


def start_sweeper(
    engine: str, closed: threading.Event, interval: float | None, sweep: Callable[[], object], label: str
) -> threading.Thread | None:
    """The thread ``memstack-{engine}-sweep`` calling ``sweep()`` every ``interval`` seconds until
    ``closed`` is set (``label`` names the store in the log); None when ``interval`` is None."""
    if interval is None:
        return None

    def loop() -> None:
        while not closed.wait(interval):
            try:
                sweep()
            except EngineClosed:
                return
            except EngineUnavailable:
                log.debug("background sweep of %s skipped: the engine is busy or unreachable", label)
            except EngineError:
                log.warning("background sweep of %s failed", label, exc_info=True)

    thread = threading.Thread(target=loop, name=f"memstack-{engine}-sweep", daemon=True)
    thread.start()
    return thread
