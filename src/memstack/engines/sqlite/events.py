"""Notifications for the SQLite engine, across processes: an event table and a listener thread.

Publishers insert into ``events`` inside their transaction, so a message exists exactly when its
batch committed. While this process has subscriptions, a listener thread with its own connection
checks ``PRAGMA data_version`` (changes when any other connection commits) every
``poll_interval`` and reads the events after the last id it saw; a local commit that published
wakes it at once. Messages go to the shared :class:`~memstack.engines._dispatch.Dispatcher`.
A child made by ``fork`` starts with no subscription and no listener (see :mod:`~memstack.foundation.forks`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, Final

from ...foundation.forks import renew_in_children
from .._dispatch import Dispatcher
from ..base import Subscription
from .schema import connect

__all__ = ["PRUNE", "EventListener"]

log = logging.getLogger("memstack.engines")

_MAX_ID: Final = "SELECT coalesce(max(id), 0) FROM events"
_AFTER: Final = "SELECT id, channel, message FROM events WHERE id > ? ORDER BY id"
PRUNE: Final = "DELETE FROM events WHERE at < ?"
"""What publishers run now and then, in their transaction: drop events older than a cutoff."""


class EventListener:
    """Subscriptions of one engine; owns the listener thread while any exist.

    Args:
        path: the database file.
        read: runs a query on the engine's own connection (under the engine's lock).
        busy_timeout: busy timeout of the listener's connection.
        poll_interval: seconds between ``data_version`` checks.
    """

    def __init__(
        self,
        path: str,
        read: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]],
        busy_timeout: float,
        poll_interval: float,
    ) -> None:
        self._path = path
        self._read = read
        self._busy_timeout = busy_timeout
        self._poll_interval = poll_interval
        self._dispatch = Dispatcher("sqlite")
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """No listener thread and a new lock (also the initial state)."""
        self._lock = threading.Lock()  # guards _last_id, _thread, _stop and the subscriber set
        self._last_id = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        """Register ``callback``; it sees only messages committed after this call.

        Raises:
            sqlite3.Error: the event table cannot be read (the engine maps it).
        """
        with self._lock:
            if self._thread is None:
                self._last_id = int(self._read(_MAX_ID, ())[0][0])
                self._stop = threading.Event()
                self._thread = threading.Thread(
                    target=self._run, args=(self._stop,), name="memstack-sqlite-listen", daemon=True
                )
                self._thread.start()
            else:
                # Hand earlier events to the earlier subscribers first, so the new one misses them.
                self._deliver(self._read(_AFTER, (self._last_id,)))
            inner = self._dispatch.subscribe(channel, callback)

        def close() -> None:
            inner.close()
            self._stop_if_idle()

        return Subscription(close)

    def wake(self) -> None:
        """A local commit published: read the event table now."""
        self._wake.set()

    def close(self) -> None:
        """Stop the listener and the dispatcher; idempotent."""
        self._halt()
        self._dispatch.close()

    def _stop_if_idle(self) -> None:
        self._halt(only_if_idle=True)

    def _halt(self, only_if_idle: bool = False) -> None:
        with self._lock:  # decided under the lock, so a concurrent subscribe keeps its listener
            if only_if_idle and self._dispatch.channels:
                return
            thread, self._thread = self._thread, None
            self._stop.set()
        self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _deliver(self, rows: list[tuple[Any, ...]]) -> None:
        for event_id, channel, message in rows:
            self._dispatch.deliver(str(channel), str(message))
            self._last_id = int(event_id)

    def _run(self, stop: threading.Event) -> None:
        conn = None
        while conn is None:
            try:
                conn = connect(self._path, self._busy_timeout)
            except sqlite3.Error:
                log.warning("sqlite listener cannot open %s; retrying", self._path, exc_info=True)
                if stop.wait(0.5):
                    return
        try:
            seen = None
            while not stop.is_set():
                woken = self._wake.is_set()
                self._wake.clear()  # a wake lost in between still shows in data_version
                try:
                    version = conn.execute("PRAGMA data_version").fetchone()[0]
                    if woken or version != seen:
                        seen = version
                        with self._lock:
                            if stop.is_set():
                                return
                            self._deliver(conn.execute(_AFTER, (self._last_id,)).fetchall())
                except sqlite3.Error:
                    log.exception("sqlite listener failed to read events from %s", self._path)
                self._wake.wait(self._poll_interval)
        finally:
            conn.close()
