"""``Rounds``: one daemon thread that runs a service's round every few seconds until stopped.

The dream scheduler and the memory loop both look at what is due on a timer; a round that raises
is logged with its trace and the next one runs, so the service outlives a failing pass.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..foundation.forks import Flag, renew_in_children

__all__ = ["Rounds"]


class Rounds:
    """Calls ``run()`` on the daemon thread ``name``, then waits ``poll`` seconds, until :meth:`stop`.

    Args:
        name: the thread's name.
        run: one round; what it returns is not used.
        poll: seconds between the end of a round and the start of the next.
        log: the logger a failing round is written to, as ``failed`` with the trace.
        failed: the message logged when a round raises.
    """

    def __init__(
        self, name: str, run: Callable[[], object], poll: float, log: logging.Logger, failed: str
    ) -> None:
        self.name, self.poll = name, poll
        self._run, self._log, self._failed = run, log, failed
        self._stop = Flag()
        self._thread: threading.Thread | None = None
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """No thread: in a forked child the parent's does not run, so :attr:`running` is False
        and :meth:`start` starts the child's own (nothing starts by itself)."""
        self._thread = None

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._thread is not None

    def start(self) -> None:
        """Start the thread (a no-op while it runs; after :meth:`stop` it starts afresh)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._run()
            except Exception:  # the service must outlive a failing round; the log keeps the trace
                self._log.exception(self._failed)
            self._stop.wait(self.poll)

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the thread (after its current round), waiting at most ``timeout`` seconds."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
