"""The one request path of the PostgreSQL engine: a connection pool (:mod:`.conns`),
prepared statements, and the rules for retrying a request that failed on the wire.

Every request is one statement in autocommit mode (a batch function call, a scan, a sweep): one
round trip, one transaction, and every one of them is safe to run twice (reads; write batches
carry a batch id the server remembers, see ``batch.sql``; flush and vacuum are
idempotent). So the retry rule is simple, at most one retry per call, always on a new connection:

=============================================  ==============================================
what failed                                    outcome
=============================================  ==============================================
no pooled connection in time (unsent)          retried on a new connection
the connection broke (backend terminated,      retried on a new connection: a write batch
server restart, network), before or after      replayed finds its first reply (or waits for
the request went out                           its first run to finish) and applies nothing
                                               twice
the retry fails too                            :class:`EngineUnavailable`; for a write that
                                               may have reached the server: "the call may
                                               have been applied"
statement timeout, deadlock, serialization     :class:`EngineUnavailable` "nothing applied"
failure, read-only server                      (the server rolled the statement back)
disk full, out of memory                       :class:`EngineFull`, nothing applied
=============================================  ==============================================

After a connection failure the pool's idle connections are checked, so the calls after it do
not meet the dead connections of a restarted server one by one.

Engines of one process on the same server and settings share one pool (:func:`acquire`,
:func:`release`): a server backend compiles the batch functions and plans their statements on
first use, so warm connections make opening another engine cheap. A pool no engine uses any more
is closed :data:`LINGER` seconds later (at once when the process exits). A forked child never
touches its parent's connections: every pool starts empty there (an engine the child inherited
opens its own connections on first use).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn, TypeVar

import psycopg
from psycopg.conninfo import make_conninfo

from ...foundation.errors import EngineClosed, EngineError, EngineFull, EngineUnavailable, MemstackError
from .conns import Connections, PoolClosed, PoolTimeout, call_prepared

__all__ = ["LINGER", "Requests", "acquire", "release"]

log = logging.getLogger("memstack.engines")

T = TypeVar("T")

# Connection loss (class 08), the server shutting down or starting (57P0x).
_LOST_CLASSES: Final = ("08", "57P01", "57P02", "57P03")
# The server rolled the statement back: running it again is safe, but this call says so.
_ROLLED_BACK: Final = {
    "57014": "the statement timed out",
    "40001": "a serialization failure",
    "40P01": "a deadlock",
    "25006": "the server is read-only (a standby, or a failover in progress)",
    "55P03": "a lock was not available",
}
_FULL: Final = ("53100", "53200", "53300")


def _lost(exc: psycopg.Error, conn: psycopg.Connection[Any] | None) -> bool:
    """Whether ``exc`` means the connection is gone (not that the server refused the request)."""
    if conn is not None and (conn.closed or conn.broken):
        return True
    state = exc.sqlstate
    return state is None or state.startswith(_LOST_CLASSES)


class Requests:
    """A connection pool and the request path over it.

    Args:
        conninfo: libpq connection string.
        label: names the server in errors (no credentials).
        min_size, max_size: pooled connections kept open / at most.
        connect_timeout: seconds a request waits for a pooled connection (or a new one).
        map_error: turns a server error of the batch functions into a memstack error (None:
            not one of theirs).

    Raises:
        EngineUnavailable: no connection could be made within ``connect_timeout``.
    """

    def __init__(
        self,
        conninfo: str,
        label: str,
        *,
        min_size: int,
        max_size: int,
        connect_timeout: float,
        map_error: Callable[[str | None, str], MemstackError | None],
    ) -> None:
        self.conninfo = conninfo
        self.label = label
        self.timeout = connect_timeout
        self._map_error = map_error
        self.users = 0
        self.ensured: set[str] = set()
        """Schemas an engine on this pool already created or checked."""
        self.closer: threading.Timer | None = None
        self.pool = Connections(self.connect, max_size=max_size, timeout=connect_timeout)
        try:
            warm = [self.pool.lend() for _ in range(min_size)]
        except (PoolTimeout, psycopg.OperationalError) as exc:
            self.pool.close()
            raise EngineUnavailable(
                f"{label} is unavailable: no connection within {connect_timeout:g} s ({_describe(exc)})"
            ) from exc
        for conn in warm:
            self.pool.give_back(conn)

    def connect(self, **settings: str) -> psycopg.Connection[Any]:
        """A new autocommit connection outside the pool (listeners, retries), with ``settings``
        over the engine's connection parameters.

        Raises:
            psycopg.OperationalError: the server cannot be reached.
        """
        return psycopg.Connection.connect(make_conninfo(self.conninfo, **settings), autocommit=True)

    def run(
        self,
        sql: str,
        params: tuple[Any, ...] | None = None,
        *,
        write: bool = False,
        replay: tuple[Any, ...] | None = None,
    ) -> list[Any]:
        """The rows of one statement (prepared on each connection once), retried as the module
        says. ``write``: a failure after sending may have applied it (named in the error);
        ``replay``: the parameters of the retry, when they differ.

        Raises:
            EngineUnavailable: the server could not be reached, or rolled the statement back.
            EngineFull: the server is out of disk or memory (nothing applied).
            MemstackError: what ``map_error`` makes of a batch function's error.
            EngineError: any other refusal of the server.
        """

        def one(conn: psycopg.Connection[Any], retry: bool) -> list[Any]:
            cursor = conn.execute(sql, replay if retry and replay else params, prepare=params is not None)
            return cursor.fetchall() if cursor.description is not None else []

        return self.call(one, write=write)

    def one(
        self,
        sql: bytes,
        params: Sequence[bytes | None],
        *,
        write: bool = False,
        replay: Sequence[bytes | None] | None = None,
    ) -> str | None:
        """The one value, as text, of a statement answering one row of one column (a batch
        function call) with text ``params``, through :func:`.conns.call_prepared`;
        retried and failing as :meth:`run`."""
        return self.call(
            lambda conn, retry: call_prepared(conn, sql, replay if retry and replay else params), write=write
        )

    def call(self, work: Callable[[psycopg.Connection[Any], bool], T], *, write: bool = False) -> T:
        """``work(conn, retry)`` on a pooled connection, retried once on a new connection when
        the connection is lost (``work`` must be safe to run twice); errors as :meth:`run`."""
        failure: BaseException | None = None
        sent = False
        for retry in (False, True):
            conn: psycopg.Connection[Any] | None = None
            try:
                conn = self.connect() if retry else self.pool.lend()
            except PoolClosed as exc:
                raise EngineClosed(f"{self.label}: engine is closed") from exc
            except (PoolTimeout, psycopg.OperationalError) as exc:
                failure = exc
                continue
            try:
                return work(conn, retry)
            except psycopg.Error as exc:
                if not _lost(exc, conn):
                    self._refuse(exc)
                failure, sent = exc, True
                if not retry:
                    log.debug("%s: connection lost (%r); retrying on a new connection", self.label, exc)
            finally:
                if retry:  # a warm connection for the calls after a failure
                    self.pool.adopt(conn)
                else:
                    self.pool.give_back(conn)
            if not retry:
                self.pool.drop_idle()  # after a failure the idle ones may all be dead
        maybe = "; the call may have been applied" if sent and write else ""
        raise EngineUnavailable(f"{self.label} is unavailable ({_describe(failure)}){maybe}") from failure

    def _refuse(self, exc: psycopg.Error) -> NoReturn:
        """Raise the memstack error for a server's refusal (the connection is fine)."""
        diag = exc.diag
        mapped = self._map_error(exc.sqlstate, diag.message_primary or str(exc))
        if mapped is not None:
            raise mapped from None
        state = exc.sqlstate or ""
        if state in _ROLLED_BACK:
            raise EngineUnavailable(f"{self.label}: {_ROLLED_BACK[state]} ({exc}); nothing applied") from exc
        if state in _FULL:
            raise EngineFull(f"{self.label} is out of resources ({exc}); nothing applied") from exc
        raise EngineError(f"{self.label} refused a statement ({state}: {exc})") from exc

    def stats(self) -> dict[str, int]:
        """The pool's counters (size, available, waiting, connection errors...)."""
        return self.pool.stats()

    def close(self) -> None:
        """Close every pooled connection; idempotent."""
        self.pool.close()


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "no attempt"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


LINGER: Final = 10.0
"""Seconds a pool no engine uses stays open for the next engine of the process."""

_Key = tuple[str, int, float]
_shared: dict[_Key, Requests] = {}
_shared_lock = threading.Lock()
_orphans: list[Connections] = []  # a forked child's copies of its parent's pools: never used, never closed


def acquire(
    conninfo: str,
    label: str,
    *,
    max_size: int,
    connect_timeout: float,
    map_error: Callable[[str | None, str], MemstackError | None],
) -> Requests:
    """The process's pool for these settings (opened if there is none); pair with :func:`release`.

    Raises:
        EngineUnavailable: no connection could be made within ``connect_timeout``.
    """
    key = (conninfo, max_size, connect_timeout)
    with _shared_lock:
        requests = _shared.get(key)
        if requests is None or requests.pool.closed:
            requests = Requests(
                conninfo,
                label,
                min_size=1,
                max_size=max_size,
                connect_timeout=connect_timeout,
                map_error=map_error,
            )
            _shared[key] = requests
        requests.users += 1
        if requests.closer is not None:
            requests.closer.cancel()
            requests.closer = None
        return requests


def release(requests: Requests) -> None:
    """One engine fewer on ``requests``; the last one leaves it open for :data:`LINGER` seconds."""
    with _shared_lock:
        requests.users -= 1
        if requests.users > 0:
            return
        timer = threading.Timer(LINGER, _close_unused, args=(requests,))
        timer.daemon = True
        requests.closer = timer
        timer.start()


def _close_unused(requests: Requests) -> None:
    with _shared_lock:
        if requests.users > 0 or requests.closer is None:
            return
        requests.closer = None
        for key, shared in list(_shared.items()):
            if shared is requests:
                del _shared[key]
    requests.close()


def _forget_parent_pools() -> None:
    # After a fork, in the child: the parent's connections (their sockets) are the parent's, and a
    # parent thread that held a lock at the fork never releases it here. Each pool starts again
    # empty, with new locks, for the engines the child inherited and those it opens; the copies of
    # the parent's connections are kept, never used nor closed (closing one would end the
    # parent's session: libpq says goodbye to the server).
    global _shared_lock
    _shared_lock = threading.Lock()
    for requests in _shared.values():
        _orphans.append(requests.pool)
        requests.pool = Connections(
            requests.connect, max_size=requests.pool.max_size, timeout=requests.timeout
        )
        requests.closer = None  # its thread is the parent's


os.register_at_fork(after_in_child=_forget_parent_pools)
