"""The PostgreSQL engine (``postgresql://user:pass@host:port/db``): production on the database
teams already run.

Every :meth:`PostgresEngine.execute` is one call of a server-side PL/pgSQL function taking the
batch as one ``text[]`` (``batch.sql``): one round trip, one transaction, with the
semantics of the memory engine. A write batch runs in ``batch_write``, which first takes a
transaction-level advisory lock on every key it names (in the order of their lock ids, which the
client computes: :func:`.codec.lock_ids`; so batches never deadlock), then
applies the ops in order; any error aborts the transaction, so a batch that raises changes
nothing, and a failed guard (guards come first) returns before any write. A read-only batch runs
in ``batch_read``, a STABLE function: one snapshot for the whole batch, and no way to write.

Time is the engine clock's, passed with each batch (never the server's clock); an expired key is
absent to every command, purged by any write that meets it, and swept in bounded steps by a
background thread. Write batches carry a batch id: the server keeps each first reply for
:attr:`PostgresEngine.dedupe_ttl_ms`, so the retry of a batch whose reply was lost applies nothing
twice (:mod:`.pool` says when a call is retried). ``publish`` travels by LISTEN/NOTIFY
(:mod:`.listen`). The schema is created and migrated by the engine itself
(:mod:`.schema`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final

import psycopg
from psycopg.conninfo import conninfo_to_dict

from ...foundation.clock import Clock
from ...foundation.errors import EngineClosed, InvalidConfiguration
from ...foundation.forks import Flag
from .._checks import check_ops
from .._dispatch import Dispatcher
from .._pages import keyset_pages
from .._semantics import upper_bound
from .._sweeper import Sweeper
from ..base import SCAN_PAGE, BatchResult, Engine, Op, Subscription, check_page
from . import admin as _postgres_admin
from .codec import decode, encode, error_of, escape, unescape
from .listen import Listener
from .pool import acquire, release
from .schema import Names, ensure_schema
from .url import parse

__all__ = ["PostgresEngine"]


_TABLES: Final = ("keys", "hashes", "sets", "lists", "zsets", "batches", "events")


def _batch_id() -> int:
    return int.from_bytes(os.urandom(8), "big") >> 1


class PostgresEngine(Engine):
    """An engine on a PostgreSQL database (12 or later, UTF-8).

    Args:
        url: ``postgresql://[user[:password]@]host[:port][/db][?param=value…]`` (or
            ``postgres://``); libpq parameters (``sslmode``…) and ``schema`` (default
            ``memstack``), see :mod:`.url`.
        clock: time source for TTLs (default: the system clock).
        connect_timeout: seconds to get a connection before :class:`EngineUnavailable`.
        statement_timeout: seconds the server runs one batch before cancelling it (nothing applied).
        tcp_timeout: seconds a silent peer may take before its connection counts as lost.
        max_connections: most pooled connections (plus one for notifications).
        sweep_interval: seconds between background sweeps of expired keys (None: no thread).
        sweep_limit: most keys one sweep removes.
        event_retention: seconds published messages stay in the event table for listeners that
            lost their connection.

    A call that fails with :class:`EngineUnavailable` after a write batch reached the server
    says "the call may have been applied"; every other failure applied nothing.

    Raises:
        InvalidUrl: not a PostgreSQL URL, an unknown parameter, a bad schema name.
        InvalidConfiguration: the database does not use UTF-8.
        EngineUnavailable: the server cannot be reached.
        EngineError: the schema was written by a newer memstack, or the server refused to create it.
    """

    name = "postgres"

    def __init__(
        self,
        url: str,
        clock: Clock | None = None,
        *,
        connect_timeout: float = 5.0,
        statement_timeout: float = 30.0,
        tcp_timeout: float = 10.0,
        max_connections: int = 16,
        sweep_interval: float | None = 1.0,
        sweep_limit: int = 1000,
        event_retention: float = 60.0,
    ) -> None:
        super().__init__(url, clock)
        target = parse(
            url, statement_timeout=statement_timeout, tcp_timeout=tcp_timeout, connect_timeout=connect_timeout
        )
        self.names = Names(target.schema)
        self.label = target.label
        self.dedupe_ttl_ms = int(2000 * (tcp_timeout + connect_timeout))
        """How long a write batch's first reply is kept: twice the longest a lost connection can
        take to notice and replace, so a retry always finds it."""
        self._closed = Flag()
        self._sweep_limit = sweep_limit
        self._retention = f"{event_retention} seconds"
        s = self.names.quoted
        # Text parameters through libpq directly (.conns.call_prepared).
        self._write_sql = (
            f"SELECT {s}.batch_write($1::text[], $2::bigint, $3::bigint, $4::bigint, $5::boolean)".encode()
        )
        self._read_sql = f"SELECT {s}.batch_read($1::text[], $2::bigint, NULL, NULL, NULL)".encode()
        self._keep = str(self.dedupe_ttl_ms).encode()
        self._requests = acquire(
            target.conninfo,
            target.label,
            max_size=max_connections,
            connect_timeout=connect_timeout,
            map_error=error_of,
        )
        try:
            if self.names.schema not in self._requests.ensured:
                self._requests.call(lambda conn, _: self._setup(conn))
                self._requests.ensured.add(self.names.schema)
        except BaseException:
            release(self._requests)
            raise
        self._dispatch = Dispatcher(self.name)
        # The listener's connection shows in pg_stat_activity as "<application_name>:listen".
        listen_as = {
            "application_name": f"{conninfo_to_dict(target.conninfo).get('application_name')}:listen"
        }
        self._listener = Listener(
            lambda: self._requests.connect(**listen_as),
            self.names.channel,
            f"{s}.events",
            self._notify,
            lambda query, params: self._requests.run(query, params),
            self._dispatch,
            connect_timeout + tcp_timeout,
            event_retention,
            target.label,
        )
        self._sweeper = Sweeper("postgres", self._closed, sweep_interval, self.sweep, target.label)

    def _setup(self, conn: psycopg.Connection[Any]) -> None:
        encoding = conn.execute("SELECT current_setting('server_encoding')").fetchone()
        if encoding is None or str(encoding[0]).upper() not in ("UTF8", "UTF-8"):
            raise InvalidConfiguration(
                f"{self.label}: the database's encoding is {encoding[0] if encoding else '?'}; "
                "memstack stores Unicode text and needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8')"
            )
        ensure_schema(conn, self.names)

    # -- engine API --------------------------------------------------------------------------
    def execute(self, ops: Sequence[Op]) -> BatchResult:
        """Apply ``ops`` atomically in one function call; see :meth:`Engine.execute`.

        Raises:
            WrongType: a command met a key of another type (nothing applied).
            NotANumber: ``incr``/``hincr`` met a non-number (nothing applied).
            EngineFull: the server is out of disk or memory (nothing applied).
            EngineUnavailable: the server cannot be reached (a write may have been applied: the
                message says so), or it rolled the batch back (statement timeout...).
            EngineClosed: after :meth:`close`.
        """
        if self._closed.is_set():
            raise EngineClosed(f"{self.label}: engine is closed")
        self._sweeper.ensure()
        if not ops:
            return BatchResult(True, [])
        write = check_ops(ops)
        argv, plain = encode(ops, write=write)
        now = str(self.now_ms()).encode()
        if write:
            # A batch id: 63 random bits (unique within the few seconds a reply is kept).
            bid = str(_batch_id()).encode()
            params = (argv, now, bid, self._keep)
            reply = self._requests.one(self._write_sql, (*params, b"f"), write=True, replay=(*params, b"t"))
        else:
            reply = self._requests.one(self._read_sql, (argv, now))
        return decode(ops, str(reply), plain)

    def scan(self, prefix: str) -> Iterator[str]:
        """Live keys starting with ``prefix``.

        Raises:
            EngineUnavailable: the server cannot be reached.
            EngineClosed: after :meth:`close`.
        """
        self._check_open()
        s = self.names.quoted
        low = escape(prefix)
        high = upper_bound(low)
        live = "(expire IS NULL OR expire > %s::bigint)"
        if high is None:
            rows = self._requests.run(
                f"SELECT key FROM {s}.keys WHERE key >= %s AND {live}", (low, self.now_ms())
            )
        else:
            rows = self._requests.run(
                f"SELECT key FROM {s}.keys WHERE key >= %s AND key < %s AND {live}",
                (low, high, self.now_ms()),
            )
        return iter([unescape(r[0]) for r in rows])

    def scan_pages(self, prefix: str, page: int = SCAN_PAGE) -> Iterator[list[str]]:
        """See :meth:`Engine.scan_pages`: one indexed query per page, from where the last stopped
        (never a cursor held open between pages).

        Raises:
            InvalidInput: ``page`` is not a positive integer.
            EngineUnavailable: the server cannot be reached.
            EngineClosed: after :meth:`close`.
        """
        check_page(page)
        self._check_open()
        s = self.names.quoted
        high = upper_bound(escape(prefix))
        bound = () if high is None else (high,)
        below = "" if high is None else " AND key < %s"
        now = self.now_ms()

        def read(op: str, low: str) -> list[str]:
            sql = (
                f"SELECT key FROM {s}.keys WHERE key {op} %s{below}"
                " AND (expire IS NULL OR expire > %s::bigint) ORDER BY key LIMIT %s"
            )
            return [r[0] for r in self._requests.run(sql, (low, *bound, now, page))]

        # The cursor is the stored (escaped) key; the caller gets keys as written.
        return ([unescape(k) for k in keys] for keys in keyset_pages(read, escape(prefix), page))

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        """Call ``callback(message)`` for every message on ``channel`` committed after this call,
        by any process (see :mod:`.listen` for what a lost connection costs).

        Raises:
            EngineUnavailable: the notification connection could not be opened in time.
            EngineClosed: after :meth:`close`.
        """
        self._check_open()
        self._listener.add()
        inner = self._dispatch.subscribe(channel, callback)

        def close() -> None:
            inner.close()
            self._listener.remove()

        return Subscription(close)

    def _notify(self, payload: str) -> None:
        self._requests.run("SELECT pg_notify(%s, %s)", (self.names.channel, payload))

    def flush(self) -> None:
        """Delete every key and batch reply (``DELETE`` on small tables, ``TRUNCATE`` on large
        ones; messages in flight stay deliverable).

        Raises:
            EngineUnavailable: the server cannot be reached.
            EngineClosed: after :meth:`close`.
        """
        self._check_open()
        self._requests.run(f"SELECT {self.names.quoted}.flush()")

    def compact(self, *, vacuum: bool = False) -> None:
        """``VACUUM`` memstack's tables, so dead row versions of deleted data go (their space is
        reused); ``vacuum`` runs ``VACUUM FULL``, which rewrites each table into new files (and
        locks it meanwhile). Row versions that a transaction begun before the delete may still
        read stay until it ends (compact again then). WAL segments, archives, replicas and backups
        keep what they hold.

        Raises:
            EngineUnavailable: the server cannot be reached.
            EngineClosed: after :meth:`close`.
        """
        self._check_open()
        tables = ", ".join(f"{self.names.quoted}.{t}" for t in _TABLES)
        statement = f"VACUUM {'FULL ' if vacuum else ''}{tables}"

        def run(conn: psycopg.Connection[Any], _: bool) -> None:
            conn.execute("SET statement_timeout = 0")
            try:
                conn.execute(statement)
            finally:
                conn.execute("RESET statement_timeout")

        self._requests.call(run)

    def sweep(self) -> int:
        """Remove up to ``sweep_limit`` expired keys now (and batch replies and events past their
        time); returns how many keys went.

        Raises:
            EngineUnavailable: the server cannot be reached.
            EngineClosed: after :meth:`close`.
        """
        self._check_open()
        rows = self._requests.run(
            f"SELECT {self.names.quoted}.sweep(%s::bigint, %s::int, %s::interval)",
            (self.now_ms(), self._sweep_limit, self._retention),
        )
        return int(rows[0][0])

    def raw_items(self) -> Iterator[tuple[str, str]]:
        """Every record of memstack's schema, as ``(where, text)`` (see ``Engine.raw_items``):
        each key with its elements, then ``events:<id>``, ``batches:<id>`` and ``meta:<name>``
        rows, expired-but-unswept ones included.

        Raises:
            EngineUnavailable: the server cannot be reached.
        """
        self._check_open()
        return iter(self._requests.call(lambda conn, _: _postgres_admin.raw_items(conn, self.names)))

    def internal_items(self) -> Iterator[tuple[str, str]]:
        """The records the engine keeps for itself: ``events:<id>`` (published messages, kept
        ``event_retention`` seconds) and ``batches:<id>`` (write batches' first replies and keys).

        Raises:
            EngineUnavailable: the server cannot be reached.
        """
        self._check_open()
        return iter(self._requests.call(lambda conn, _: _postgres_admin.internal_items(conn, self.names)))

    def drop_internal(self, wheres: Iterable[str]) -> int:
        """Delete the named events and withdraw the named batch replies (a retry of such a batch
        still applies nothing, and learns its results are gone); returns how many changed.

        Raises:
            EngineUnavailable: the server cannot be reached.
        """
        self._check_open()
        names = list(wheres)
        return self._requests.call(lambda conn, _: _postgres_admin.drop_internal(conn, self.names, names))

    def details(self) -> dict[str, str]:
        """What ``memstack doctor`` shows: server version, schema and its version, the pool.

        Raises:
            EngineUnavailable: the server cannot be reached.
        """
        self._check_open()
        return self._requests.call(lambda conn, _: _postgres_admin.details(conn, self.names, self._requests))

    def close(self) -> None:
        """Stop the sweeper and listener threads and close every connection; idempotent."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._listener.close()
        self._dispatch.close()
        self._sweeper.join()
        release(self._requests)

    # -- helpers -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed.is_set():
            raise EngineClosed(f"{self.label}: engine is closed")
