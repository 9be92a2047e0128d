"""The idle connections to one Redis node, kept by the engine's transport.

redis-py's pool checks every checkout: the process id (two ``getpid`` system calls per request)
and whether the socket holds unread data (three more). On loopback those calls cost more than
a whole session put's script (``bench/session_ops.py``), so batches take connections from here:

* A connection comes back clean or not at all: a request that fails half-way disconnects it
  (it reconnects on its next use), so a reused socket never holds a stale reply.
* A connection idle for more than :data:`IDLE_CHECK_S` is checked as redis-py checks it (the
  server may have closed it: a restart, its ``timeout`` setting); one used since is trusted,
  like the "alive bypass window" of database pools. A trusted connection that turns out dead
  fails its request, and the transport's retry rules (``transport``) decide what to do.
* After a connection error every idle connection of the node is dropped (:meth:`Connections.drop_idle`):
  they are likely dead too, and a retry takes a new connection (:meth:`Connections.fresh`).
* A forked child never writes to its parent's sockets: a fork bumps a generation number, and
  connections of an older generation are dropped (closing the child's copy of the descriptor only).

Connections are made by the caller's factory: redis-py's public ``Connection`` classes with the
settings read from the engine URL (TLS, auth, database).
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Callable
from typing import Any, Final

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["IDLE_CHECK_S", "Connections"]

IDLE_CHECK_S: Final = 0.5
"""Seconds a connection may rest before it is checked again on checkout."""

_generation = 0


def _forked() -> None:
    global _generation  # one process-wide counter, bumped only in a fork's child
    _generation += 1


os.register_at_fork(after_in_child=_forked)


class Connections:
    """A free list of redis-py connections (thread-safe: ``list`` pop and append are atomic).

    Args:
        make: builds a new, not yet connected, redis-py connection.
        keep: most idle connections kept; more are closed when returned.
        monotonic: seconds for idle times (tests inject a manual one).
    """

    def __init__(
        self, make: Callable[[], Any], keep: int, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._make = make
        self._keep = keep
        self._now = monotonic
        self._free: list[tuple[Any, int, float]] = []
        self._closed = False
        # An engine dropped without close() still closes its sockets (no ResourceWarning).
        weakref.finalize(self, _disconnect_all, self._free)

    def take(self) -> Any:
        """A connected, clean connection (new if none is free).

        Raises:
            redis.exceptions.ConnectionError, redis.exceptions.TimeoutError: cannot connect.
        """
        while True:
            try:
                conn, generation, used = self._free.pop()
            except IndexError:
                return self.fresh()
            if generation != _generation:
                conn.disconnect()  # the parent's socket: redis-py only closes our descriptor
                continue
            if self._now() - used > IDLE_CHECK_S:
                _refresh(conn)
            return conn

    def fresh(self) -> Any:
        """A new connection, connected now (never one from the free list).

        Raises:
            redis.exceptions.ConnectionError, redis.exceptions.TimeoutError: cannot connect.
        """
        conn = self._make()
        conn.connect()
        return conn

    def drop_idle(self) -> None:
        """Disconnect every free connection (after an error: they likely died with it)."""
        _disconnect_all(self._free)

    def give(self, conn: Any) -> None:
        """Return a connection that is clean (its last reply fully read) or disconnected."""
        if self._closed or len(self._free) >= self._keep:
            conn.disconnect()
            return
        self._free.append((conn, _generation, self._now()))

    def close(self) -> None:
        """Disconnect every free connection; those in use are closed when given back."""
        self._closed = True
        _disconnect_all(self._free)

    def __len__(self) -> int:
        """Connections free right now."""
        return len(self._free)


def _disconnect_all(free: list[tuple[Any, int, float]]) -> None:
    while free:
        try:
            conn, _, _ = free.pop()
        except IndexError:  # another thread took the last one
            break
        conn.disconnect()


def _refresh(conn: Any) -> None:
    """Reconnect ``conn`` if the server closed it or it holds data nobody asked for."""
    try:
        if conn.can_read():
            raise RedisConnectionError("connection has unread data")
    except (RedisConnectionError, RedisTimeoutError, OSError):
        conn.disconnect()
        conn.connect()
