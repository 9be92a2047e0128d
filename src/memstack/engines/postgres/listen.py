"""Notifications for the PostgreSQL engine, across processes: LISTEN/NOTIFY, with a catch-up read
of the event table after a lost connection.

A batch's ``publish`` inserts its message into ``{schema}.events`` and sends ``pg_notify`` on the
schema's one channel; PostgreSQL delivers notifications only for committed transactions, in commit
order. The payload is ``[id, channel, message]``, or ``[id]`` when that would pass NOTIFY's 8000
bytes (the listener then reads the row). While this engine has subscriptions, one thread holds a
connection that LISTENs and hands every message to the shared
:class:`~memstack.engines._dispatch.Dispatcher`.

What a lost listener connection costs (server restart, terminated backend, network): the thread
reconnects (back-off up to 1 s), LISTENs again, then reads from the event table every message
stored since it started listening on the connection it lost and delivers those it had not
delivered (by event id). While it cannot reconnect, it polls the event table the same way through
the engine's pool at every attempt, so a listener that alone cannot connect (say, the server is at
``max_connections``) still delivers. So no message of a committed batch is lost across an outage
shorter than the event retention (``event_retention``, 60 s by default), except one whose
transaction inserted it before the lost connection began listening and committed after that
connection died. Messages recovered this way arrive in event-id order, late.

A child made by ``fork`` starts with no subscription and no connection (see
:mod:`~memstack.foundation.forks`); its first subscription opens its own.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Final

import psycopg
from psycopg import sql

from ...foundation.errors import EngineUnavailable
from ...foundation.forks import renew_in_children
from .._dispatch import Dispatcher
from .codec import unescape

__all__ = ["Listener"]

log = logging.getLogger("memstack.engines")

_POLL: Final = 0.2  # seconds a wait for notifications lasts before the thread re-checks close()
_BACKOFF_MAX: Final = 1.0
_SYNC: Final = "sync"


class Listener:
    """One LISTEN connection of one engine, running while the engine has subscriptions.

    Args:
        connect: opens a new autocommit connection.
        channel: the NOTIFY channel of the schema.
        events: the quoted event table (``"schema".events``).
        notify: sends one payload on the channel from another connection (barriers).
        read: runs a query on another connection (the fallback poll).
        dispatch: where messages go.
        wait: seconds :meth:`add` waits for the connection.
        retention: seconds the event table keeps messages (how long delivered ids are kept).
        label: names the server in errors.
    """

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        channel: str,
        events: str,
        notify: Callable[[str], None],
        read: Callable[[str, tuple[Any, ...]], list[Any]],
        dispatch: Dispatcher,
        wait: float,
        retention: float,
        label: str,
    ) -> None:
        self._connect = connect
        self._channel = channel
        self._fetch = f"SELECT channel, message FROM {events} WHERE id = %s"
        self._since = f"SELECT id, channel, message FROM {events} WHERE at >= %s ORDER BY id"
        self._notify = notify
        self._read = read
        self._dispatch = dispatch
        self._wait = wait
        self._retention = retention + 30.0
        self._label = label
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """No subscriber, connection or thread, new locks (also the initial state)."""
        self._cond = threading.Condition()
        self._users = 0
        self._ready = False
        self._synced: set[str] = set()
        # Every process of the schema sees every barrier: a forked child's must differ from its parent's.
        self._token_prefix = f"{os.getpid()}:{id(self)}:"
        self._tokens = itertools.count(1)
        self._delivered: dict[int, float] = {}  # event id -> monotonic time delivered
        self._pruned = time.monotonic()
        self._once = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def add(self) -> None:
        """One more subscriber; returns once every message committed before this call has been
        handed to the dispatcher (so a subscriber registered next sees only later ones).

        Raises:
            EngineUnavailable: the listener could not listen within ``wait`` seconds.
        """
        with self._cond:
            self._users += 1
            fresh = self._thread is None
            if fresh:
                self._stop = threading.Event()
                self._thread = threading.Thread(
                    target=self._run, args=(self._stop,), name="memstack-postgres-listen", daemon=True
                )
                self._thread.start()
            try:
                self._await(lambda: self._ready, "listening for notifications")
            except BaseException:
                self._release()
                raise
        if fresh:
            return  # everything this thread will ever read was committed after its LISTEN
        # A barrier: its notification travels behind every message committed before it.
        token = f"{self._token_prefix}{next(self._tokens)}"
        try:
            self._notify(json.dumps([_SYNC, token]))
            with self._cond:
                self._await(lambda: token in self._synced, "the notification barrier")
                self._synced.discard(token)
        except BaseException:
            self.remove()
            raise

    def _await(self, done: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + self._wait
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EngineUnavailable(f"{self._label}: {what} did not complete within {self._wait:g} s")
            self._cond.wait(remaining)

    def remove(self) -> None:
        """One subscriber fewer; the last one stops the thread."""
        with self._cond:
            self._release()

    def _release(self) -> None:
        self._users -= 1
        if self._users <= 0:
            self._users = 0
            self._halt()

    def _halt(self) -> None:
        self._stop.set()
        self._thread = None
        self._ready = False

    def close(self) -> None:
        """Stop the thread (it closes its connection within a poll interval); idempotent."""
        with self._cond:
            self._users = 0
            self._halt()

    # -- the thread ----------------------------------------------------------------------------
    def _run(self, stop: threading.Event) -> None:
        backoff = 0.05
        since: Any = None  # server time the lost connection started listening (None: none lost)
        while not stop.is_set():
            conn: psycopg.Connection[Any] | None = None
            try:
                conn = self._connect()
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                started = conn.execute("SELECT clock_timestamp()").fetchone()
                if since is not None:
                    self._catch_up(conn, since)
                since = started[0] if started else None
                with self._cond:
                    if not stop.is_set():  # a stopped thread's state is no longer the listener's
                        self._ready = True
                    self._cond.notify_all()
                backoff = 0.05
                while not stop.is_set():
                    # Collected first: the generator holds the connection, which _handle may query.
                    payloads = [n.payload for n in conn.notifies(timeout=_POLL, stop_after=1)]
                    for payload in payloads:
                        if stop.is_set():  # a thread started after this one delivers from now on
                            return
                        self._handle(conn, payload)
                    self._forget_old()
            except Exception as exc:  # any failure of the connection: reconnect
                if not stop.is_set():
                    log.debug("%s: notification connection lost: %r", self._label, exc)
            finally:
                with self._cond:
                    if not stop.is_set():
                        self._ready = False
                if conn is not None:
                    with contextlib.suppress(Exception):  # closing a broken connection may fail
                        conn.close()
            if since is not None and not stop.is_set():
                self._poll(since)
            stop.wait(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX)

    def _handle(self, conn: psycopg.Connection[Any], payload: str) -> None:
        item = json.loads(payload)
        if item[0] == _SYNC:
            if str(item[1]).startswith(self._token_prefix):  # not another process's barrier
                with self._cond:
                    self._synced.add(item[1])
                    self._cond.notify_all()
            return
        event_id = int(item[0])
        if len(item) == 3:
            channel, message = item[1], item[2]
        else:  # too long for NOTIFY: read it from the event table
            row = conn.execute(self._fetch, (event_id,)).fetchone()
            if row is None:
                log.warning("%s: event %d was pruned before it could be delivered", self._label, event_id)
                return
            channel, message = row
        self._deliver(event_id, channel, message)

    def _deliver(self, event_id: int, channel: str, message: str) -> None:
        with self._once:  # a message is handed over once, whichever path found it
            if event_id in self._delivered:
                return
            self._delivered[event_id] = time.monotonic()
            self._dispatch.deliver(unescape(channel), unescape(message))

    def _catch_up(self, conn: psycopg.Connection[Any], since: Any) -> None:
        for event_id, channel, message in conn.execute(self._since, (since,)).fetchall():
            self._deliver(int(event_id), channel, message)

    def _poll(self, since: Any) -> None:
        """The fallback while the listener cannot connect: the event table through the pool."""
        try:
            rows = self._read(self._since, (since,))
        except Exception:  # the server is down too: the next attempt polls again
            log.debug("%s: polling the event table failed", self._label, exc_info=True)
            return
        for event_id, channel, message in rows:
            self._deliver(int(event_id), channel, message)

    def _forget_old(self) -> None:
        now = time.monotonic()
        if now - self._pruned < 5.0:
            return
        self._pruned = now
        cutoff = now - self._retention
        with self._once:
            self._delivered = {i: t for i, t in self._delivered.items() if t >= cutoff}
