"""The PostgreSQL engine's connections: a small pool, and the statement call that skips psycopg's
cursor layer.

A request borrows a connection, runs one statement and gives it back. The pool lends the most
recently returned connection (its backend's caches are warm), opens a new one while fewer than
``max_size`` are open, and otherwise waits up to ``timeout`` for one to come back. Lending and
returning are a deque pop and append: psycopg_pool's bookkeeping cost a put about a twentieth of
its time (``bench/session_ops.py``). A connection that comes back broken or inside a transaction
is closed; :meth:`Connections.drop_idle` closes the idle ones after a failure, so the calls after
a server restart do not meet its dead connections one by one.

:func:`call_prepared` sends a statement prepared once per connection with text parameters and
reads its one value through libpq directly: psycopg's cursor (adaptation, prepared-statement
manager, result description) cost more than the rest of the client side together.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg import generators
from psycopg.errors import error_from_result
from psycopg.pq import ExecStatus, TransactionStatus

__all__ = ["Connections", "PoolClosed", "PoolTimeout", "call_prepared"]


class PoolTimeout(Exception):
    """No connection came free (or could be opened) in time."""


class PoolClosed(Exception):
    """The pool was closed: it lends nothing more."""


class Connections:
    """At most ``max_size`` autocommit connections made by ``connect``.

    Raises:
        psycopg.OperationalError: from :meth:`lend`, when a new connection cannot be opened.
        PoolTimeout: from :meth:`lend`, when none came free within ``timeout`` seconds.
    """

    def __init__(
        self, connect: Callable[[], psycopg.Connection[Any]], *, max_size: int, timeout: float
    ) -> None:
        self._connect = connect
        self.max_size = max_size
        self._timeout = timeout
        self._idle: deque[psycopg.Connection[Any]] = deque()
        self._lock = threading.Lock()
        self._freed = threading.Condition(self._lock)
        self._open = 0  # idle and lent
        self._waiting = 0
        self._errors = 0
        self.closed = False

    def lend(self) -> psycopg.Connection[Any]:
        """A connection for one request; pair with :meth:`give_back`.

        Raises:
            PoolTimeout: none came free within the timeout.
            psycopg.OperationalError: a new connection could not be opened.
            PoolClosed: the pool is closed.
        """
        try:
            return self._idle.pop()  # atomic: no lock on the common path
        except IndexError:
            pass
        deadline = time.monotonic() + self._timeout
        with self._lock:
            while True:
                if self.closed:
                    raise PoolClosed("the pool is closed")
                # Counted before looking, so a connection given back meanwhile wakes this wait.
                self._waiting += 1
                try:
                    if self._idle:
                        return self._idle.pop()
                    if self._open < self.max_size:
                        self._open += 1
                        break
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise PoolTimeout(f"no connection came free within {self._timeout:g} s")
                    self._freed.wait(remaining)
                finally:
                    self._waiting -= 1
        try:
            return self._connect()
        except BaseException:
            self._forget(errors=1)
            raise

    def give_back(self, conn: psycopg.Connection[Any]) -> None:
        """Return a lent connection: kept when it is usable and idle, closed otherwise."""
        usable = not (conn.closed or conn.broken) and conn.pgconn.transaction_status == TransactionStatus.IDLE
        if self.closed or not usable:
            conn.close()
            self._forget()
            return
        self._idle.append(conn)
        if self.closed:  # closed meanwhile: close() may have emptied the idle ones before this one
            self.drop_idle()
        elif self._waiting:
            with self._lock:
                self._freed.notify()

    def adopt(self, conn: psycopg.Connection[Any]) -> None:
        """Keep ``conn``, opened outside the pool (a retry's), as an idle one when it is usable
        and there is room; close it otherwise."""
        with self._lock:
            room = not self.closed and self._open < self.max_size
            if room:
                self._open += 1
        if room:
            self.give_back(conn)
        else:
            conn.close()

    def drop_idle(self) -> None:
        """Close every idle connection (after a failure: they may all be dead)."""
        while True:
            try:
                conn = self._idle.pop()
            except IndexError:
                return
            conn.close()
            self._forget()

    def _forget(self, *, errors: int = 0) -> None:
        with self._lock:
            self._open -= 1
            self._errors += errors
            self._freed.notify()

    def stats(self) -> dict[str, int]:
        """``pool_size`` (open), ``pool_available`` (idle), ``pool_max``, ``requests_waiting``,
        ``connections_errors`` (failed opens)."""
        return {
            "pool_size": self._open,
            "pool_available": len(self._idle),
            "pool_max": self.max_size,
            "requests_waiting": self._waiting,
            "connections_errors": self._errors,
        }

    def close(self) -> None:
        """Close the idle connections now and every lent one when it comes back; idempotent."""
        with self._lock:
            self.closed = True
            self._freed.notify_all()
        self.drop_idle()


_Names = dict[bytes, bytes]
_PREPARED: weakref.WeakKeyDictionary[psycopg.Connection[Any], _Names] = weakref.WeakKeyDictionary()
"""Per connection: statement text → the name it is prepared under."""


def call_prepared(conn: psycopg.Connection[Any], sql: bytes, params: Sequence[bytes | None]) -> str | None:
    """The one value (as text) of statement ``sql`` with text ``params`` on ``conn``, prepared
    on first use there.

    Raises:
        psycopg.Error: the server refused the statement, or the connection broke.
    """
    pg = conn.pgconn
    names = _PREPARED.get(conn)
    if names is None:
        names = _PREPARED[conn] = {}
    name = names.get(sql)
    if name is None:
        name = f"memstack_{len(names)}".encode()
        pg.send_prepare(name, sql)
        _check(conn.wait(generators.execute(pg)), ExecStatus.COMMAND_OK)
        names[sql] = name
    pg.send_query_prepared(name, params)
    result = _check(conn.wait(generators.execute(pg)), ExecStatus.TUPLES_OK)
    value = result.get_value(0, 0)
    return None if value is None else value.decode()


def _check(results: list[Any], wanted: ExecStatus) -> Any:
    result = results[-1]
    if result.status != wanted:
        raise error_from_result(result, encoding="utf-8")
    return result
