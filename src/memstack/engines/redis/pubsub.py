"""The Redis engine's pub/sub listener: one thread per engine, reconnecting after losses.

The thread reads one pub/sub connection and hands every message to a
:class:`~memstack.engines._dispatch.Dispatcher`, which runs the callbacks in publication order.
After a connection loss it reconnects with a bounded back-off and subscribes again to every
channel that still has subscribers (messages published meanwhile are lost, as with Redis).
A child made by ``fork`` starts with no subscription and no connection (see
:mod:`~memstack.foundation.forks`): it never writes to its parent's pub/sub connection.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ...foundation.errors import EngineUnavailable
from ...foundation.forks import Flag, renew_in_children
from ...foundation.keyspace import family_named, no_tag
from .._dispatch import Dispatcher

__all__ = ["Listener"]

log = logging.getLogger("memstack.engines")

_POLL = 0.2  # seconds a read waits before the thread re-checks for close()
_BACKOFF_MAX = 1.0
_SYNC = family_named("engine.sync").prefix(no_tag)  # barrier subscriptions (see Listener._barrier)


class Listener:
    """Keeps one Redis pub/sub connection subscribed to the channels callers want.

    Args:
        connect: returns a redis-py client whose ``pubsub()`` opens the connection (called again
            after every loss, so a cluster can hand out another node).
        dispatch: where messages go.
        wait: seconds :meth:`add` waits for the server to confirm a subscription.
        url: named in errors.
    """

    def __init__(self, connect: Callable[[], Any], dispatch: Dispatcher, wait: float, url: str) -> None:
        self._connect = connect
        self._dispatch = dispatch
        self._wait = wait
        self._url = url
        self._closed = Flag()
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """No channel, connection or thread, a new condition (also the initial state); a closed
        listener stays closed."""
        self._cond = threading.Condition()
        self._wanted: dict[str, int] = {}
        self._live: set[str] = set()
        self._synced: set[str] = set()
        self._sync = 0
        self._pubsub: Any = None  # the parent's, if any: closed by the parent alone
        self._thread: threading.Thread | None = None

    def add(self, channel: str) -> None:
        """Subscribe to ``channel`` (counted); returns once the server confirmed it.

        Raises:
            EngineUnavailable: no confirmation within ``wait`` seconds.
        """
        with self._cond:
            self._wanted[channel] = self._wanted.get(channel, 0) + 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memstack-redis-pubsub", daemon=True)
                self._thread.start()
            if channel in self._live:
                self._barrier(channel)
                return
            self._subscribe_and_wait(
                channel, channel, self._live, f"subscribing to {channel!r} was not confirmed"
            )

    def _barrier(self, channel: str) -> None:
        """Wait until every message already on the connection was handed to the dispatcher.

        The confirmation of a throw-away SUBSCRIBE travels the pub/sub stream behind the messages
        published before it, so seeing it proves the listener is past them: a new subscriber
        never sees older messages.
        """
        self._sync += 1
        token = f"{_SYNC}{id(self)}:{self._sync}"
        self._subscribe_and_wait(token, channel, self._synced, "the pub/sub connection did not answer")
        self._synced.discard(token)
        if self._pubsub is not None:
            with contextlib.suppress(Exception):  # gone anyway once the connection is
                self._pubsub.unsubscribe(token)

    def _subscribe_and_wait(self, name: str, channel: str, confirmed: set[str], problem: str) -> None:
        """SUBSCRIBE ``name`` and wait (holding the condition) until it shows up in ``confirmed``;
        on time-out drop the subscriber of ``channel`` and raise ``EngineUnavailable(problem)``."""
        if self._pubsub is not None:
            with contextlib.suppress(Exception):  # a dead connection: the thread reconnects
                self._pubsub.subscribe(name)
        deadline = time.monotonic() + self._wait
        while name not in confirmed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._drop(channel)
                raise EngineUnavailable(f"{self._url}: {problem}")
            self._cond.wait(remaining)

    def remove(self, channel: str) -> None:
        """Drop one subscriber of ``channel``; unsubscribes when it was the last."""
        with self._cond:
            self._drop(channel)

    def _drop(self, channel: str) -> None:
        count = self._wanted.get(channel, 0) - 1
        if count > 0:
            self._wanted[channel] = count
            return
        self._wanted.pop(channel, None)
        self._live.discard(channel)
        if self._pubsub is not None:
            with contextlib.suppress(Exception):  # gone anyway once the connection is
                self._pubsub.unsubscribe(channel)

    def _run(self) -> None:
        backoff = 0.05
        while not self._closed.is_set():
            pubsub: Any = None
            try:
                pubsub = self._connect().pubsub()
                with self._cond:
                    self._pubsub = pubsub
                    if self._wanted:
                        pubsub.subscribe(*self._wanted)
                backoff = 0.05
                while not self._closed.is_set():
                    self._handle(pubsub.get_message(timeout=_POLL))
            except Exception as exc:  # any failure of the connection: reconnect
                if not self._closed.is_set():
                    log.debug("pub/sub connection to %s lost: %r", self._url, exc)
            finally:
                with self._cond:
                    if self._pubsub is pubsub:
                        self._pubsub = None
                    self._live.clear()
                if pubsub is not None:
                    with contextlib.suppress(Exception):  # closing a broken connection may fail
                        pubsub.close()
            self._closed.wait(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX)

    def _handle(self, message: dict[str, Any] | None) -> None:
        if message is None:
            return
        kind = message["type"]
        if kind == "message":
            self._dispatch.deliver(message["channel"], message["data"])
        elif kind == "subscribe":
            with self._cond:
                channel = message["channel"]
                if channel.startswith(_SYNC):
                    self._synced.add(channel)
                elif channel in self._wanted:
                    self._live.add(channel)
                self._cond.notify_all()
        elif kind == "unsubscribe":
            with self._cond:
                if message["channel"] not in self._wanted:
                    self._live.discard(message["channel"])

    def close(self) -> None:
        """Stop the thread and close the connection; idempotent."""
        self._closed.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=_POLL * 10)
