"""In-process delivery of published messages: one daemon thread per engine, in order.

Used by every engine: for every message (memory), or for the messages its listener reads (SQLite,
Redis, PostgreSQL). Callback exceptions are logged and never reach publishers. In a child made by
``fork`` a dispatcher starts empty (see :mod:`~memstack.foundation.forks`): the parent's
subscribers stay the parent's.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Callable

from ..foundation.forks import renew_in_children
from .base import Subscription

log = logging.getLogger("memstack.engines")

_STOP = object()


def join_unless_current(thread: threading.Thread | None, timeout: float = 5.0) -> None:
    """Wait for ``thread`` to end, unless there is none or it is the caller (a thread that
    closes its own engine from a callback must not wait for itself)."""
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout=timeout)


class Dispatcher:
    """Channel → callbacks, drained by one background thread started on first subscribe."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._ids = itertools.count(1)
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """No subscriber, no thread, a new lock and queue (also the initial state)."""
        self._subs: dict[str, dict[int, Callable[[str], None]]] = {}
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def has_subscribers(self, channel: str) -> bool:
        """True if anyone listens on ``channel`` (publishers skip the queue otherwise)."""
        return bool(self._subs.get(channel))

    @property
    def channels(self) -> list[str]:
        """Channels with at least one subscriber."""
        with self._lock:
            return [c for c, subs in self._subs.items() if subs]

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        """Register ``callback`` on ``channel``; the returned subscription unregisters it."""
        with self._lock:
            sub_id = next(self._ids)
            self._subs.setdefault(channel, {})[sub_id] = callback
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"memstack-{self._name}-dispatch", daemon=True
                )
                self._thread.start()

        def remove() -> None:
            with self._lock:
                subs = self._subs.get(channel)
                if subs is not None:
                    subs.pop(sub_id, None)
                    if not subs:
                        del self._subs[channel]

        return Subscription(remove)

    def deliver(self, channel: str, message: str) -> None:
        """Queue ``message`` for the subscribers ``channel`` has now (later ones never see it)."""
        if self.has_subscribers(channel):
            with self._lock:
                ids = frozenset(self._subs.get(channel, ()))
            self._queue.put((channel, message, ids))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            assert isinstance(item, tuple)  # the queue holds (channel, message, ids) or _STOP
            channel: str = item[0]
            message: str = item[1]
            ids: frozenset[int] = item[2]
            with self._lock:
                # Subscribers present at publication and not closed since.
                callbacks = [cb for i, cb in self._subs.get(channel, {}).items() if i in ids]
            for callback in callbacks:
                try:
                    callback(message)
                except Exception:
                    log.exception("subscriber callback failed on channel %r", channel)

    def close(self) -> None:
        """Stop the thread after it drained what was queued."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._subs.clear()
        if thread is not None:
            self._queue.put(_STOP)
            join_unless_current(thread)
