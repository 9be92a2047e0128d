"""The embedded engine (``sqlite:///path.db``): one durable file, shared by the processes of a machine.

WAL journal with ``synchronous=NORMAL``; each :meth:`SqliteEngine.execute` is one transaction
(``BEGIN IMMEDIATE`` when it writes, a plain read transaction otherwise), so a batch is atomic
across processes and any exception rolls it back whole. Expired keys are treated as absent,
purged when a write meets them, and swept in bounded steps by a background thread. Published
messages travel through an event table to every process (see ``events``).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ...foundation.clock import Clock
from ...foundation.errors import EngineClosed, EngineError, EngineUnavailable
from ...foundation.forks import Flag, renew_in_children
from ...foundation.redact import redact_url
from .._checks import check_ops
from .._local_ops import apply
from .._pages import keyset_pages
from .._semantics import upper_bound
from .._sweeper import Sweeper
from ..base import SCAN_PAGE, BatchResult, Engine, Op, Subscription, check_page
from ..commands import COMMANDS
from . import ops as _sqlite_ops
from . import tx as _sqlite_tx
from .events import PRUNE, EventListener
from .raw import drop_events, event_items, raw_items
from .schema import connect, ensure_schema
from .url import sqlite_path

__all__ = ["SqliteEngine", "sqlite_path"]

log = logging.getLogger("memstack.engines")

# SQLite primary result codes that mean "the file cannot be used right now", not "bad command".
_UNAVAILABLE: Final = frozenset({5, 6, 8, 10, 13, 14, 26})  # BUSY LOCKED READONLY IOERR FULL CANTOPEN NOTADB
_EVENT_TTL: Final = 60.0  # seconds (wall time) an event stays for slow listeners
_PRUNE_EVERY: Final = 10.0  # seconds between prunes by one publisher
_CACHE_MAX: Final = 4096  # keys rows remembered between writes
_SWEEP_BUSY_MS: Final = 50  # how long a background sweep waits for another process's write lock
# Reads that run one SELECT of the keys row: alone in a batch they need no explicit transaction.
_ONE_READ: Final = frozenset({"exists", "pttl", "get", "llen", "hlen", "scard", "zcard"})
_PREFETCH_OPS: Final = 16  # a batch this long reads its keys' rows together before its first op
_KEY_ARGS: Final = {name: c.keys for name, c in COMMANDS.items() if not c.channel}
_orphans: list[sqlite3.Connection] = []  # a forked child's copies of its parent's connections
_SWEEP_PROBE: Final = "SELECT 1 FROM keys WHERE expire <= ? LIMIT 1"
_SWEEP: Final = "DELETE FROM keys WHERE key IN (SELECT key FROM keys WHERE expire <= ? LIMIT ?)"
_SCAN: Final = "SELECT key FROM keys WHERE key >= ? AND key < ? AND (expire IS NULL OR expire > ?)"
_SCAN_ALL: Final = "SELECT key FROM keys WHERE key >= ? AND (expire IS NULL OR expire > ?)"
_PAGES: Final = {  # a page of a streaming scan (see engines._pages)
    (op, bounded): f"SELECT key FROM keys WHERE key {op} ?{' AND key < ?' if bounded else ''}"
    " AND (expire IS NULL OR expire > ?) ORDER BY key LIMIT ?"
    for op in (">=", ">")
    for bounded in (True, False)
}
_FLUSH: Final = tuple(f"DELETE FROM {table}" for table in ("hashes", "sets", "lists", "zsets", "keys"))


def _keys_of(ops: Sequence[Op]) -> Iterator[str]:
    for name, args in ops:
        where = _KEY_ARGS[name]
        if where == "first":
            yield args[0]
        elif where == "all":
            yield from args


class SqliteEngine(Engine):
    """``sqlite:///path.db``: a WAL-mode SQLite file, safe for threads and processes.

    Args:
        url: ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``; parent
            directories are created.
        clock: time source for TTLs.
        busy_timeout: seconds a write waits for another process's lock before
            :class:`EngineUnavailable`.
        sweep_interval: seconds between background sweeps of expired keys (None: no thread).
        sweep_limit: most keys one sweep removes.
        poll_interval: seconds between checks for messages published by other processes.

    Raises:
        InvalidUrl: the URL names no usable file path.
        EngineUnavailable: the file cannot be created, opened or locked in time.
    """

    name = "sqlite"

    def __init__(
        self,
        url: str,
        clock: Clock | None = None,
        *,
        busy_timeout: float = 5.0,
        sweep_interval: float | None = 1.0,
        sweep_limit: int = 1000,
        poll_interval: float = 0.002,
    ) -> None:
        super().__init__(url, clock)
        self.path = sqlite_path(url)
        self._lock = threading.RLock()
        self._closed = Flag()
        self._inherited = False  # a forked child's copy, still on the parent's connection
        self._sweep_limit = sweep_limit
        self._busy_ms = int(busy_timeout * 1000)
        self._last_prune = 0.0
        try:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EngineUnavailable(f"sqlite file {self.path}: cannot create its directory: {exc}") from exc
        try:
            self._conn = connect(self.path, busy_timeout)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        try:
            ensure_schema(self._conn, self.path)
        except sqlite3.Error as exc:
            self._conn.close()
            raise self._error(exc) from exc
        except EngineError:
            self._conn.close()
            raise
        self._cur = self._conn.cursor()
        self._cache: dict[str, Any] = {}  # key -> keys row (None: absent); see _sqlite_ops.Tx
        self._version: object = None
        self._events = EventListener(self.path, self._read, busy_timeout, poll_interval)
        # Each round waits only briefly for another process's lock: commands of this process
        # queue behind the sweep, and the next round finds the same keys.
        self._sweeper = Sweeper(
            "sqlite", self._closed, sweep_interval, lambda: self._sweep(_SWEEP_BUSY_MS), str(self.path)
        )
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """In a forked child: a new lock; a connection of its own opens on first use. SQLite's file
        locks belong to the process that took them, so the parent's connection is kept, never
        used nor closed."""
        self._lock = threading.RLock()
        self._inherited = not self._closed.is_set()
        _orphans.append(self._conn)  # never closed here, even when this engine is collected

    def _reopen(self) -> None:
        self._inherited = False
        self._cache.clear()
        self._version = None
        try:
            self._conn = connect(self.path, self._busy_ms / 1000)
        except sqlite3.Error as exc:
            self._closed.set()  # the parent's connection is never this child's to use
            raise self._error(exc) from exc
        self._cur = self._conn.cursor()

    # -- engine API --------------------------------------------------------------------------
    def execute(self, ops: Sequence[Op]) -> BatchResult:
        write = check_ops(ops)
        with self._lock:
            self._check_open()
            cur = self._cur
            cache = self._cache
            try:
                if write:
                    cur.execute("BEGIN IMMEDIATE")
                    # Another connection committed since our last write: cached rows may be stale.
                    version = cur.execute("PRAGMA data_version").fetchone()[0]
                    if version != self._version or len(cache) > _CACHE_MAX:
                        cache.clear()
                        self._version = version
                elif len(ops) != 1 or ops[0][0] not in _ONE_READ:
                    cur.execute("BEGIN")
            except sqlite3.Error as exc:
                self._rollback()
                raise self._error(exc) from exc
            tx = _sqlite_tx.Tx(cur, self.now_ms(), write, cache)
            try:
                if write and len(ops) >= _PREFETCH_OPS:
                    tx.prefetch(_keys_of(ops))
                applied, results = apply(_sqlite_ops.OPS, tx, ops)
                if not applied:
                    self._rollback()
                    return BatchResult(False, results)
                if write:
                    tx.flush()
                    if tx.published:
                        self._maybe_prune()
                if self._conn.in_transaction:
                    cur.execute("COMMIT")
            except BaseException as exc:
                self._rollback()
                if isinstance(exc, sqlite3.Error):
                    raise self._error(exc) from exc
                raise
        if tx.published:
            self._events.wake()
        return BatchResult(True, results)

    def scan(self, prefix: str) -> Iterator[str]:
        upper = upper_bound(prefix)
        if upper is None:
            rows = self._read(_SCAN_ALL, (prefix, self.now_ms()))
        else:
            rows = self._read(_SCAN, (prefix, upper, self.now_ms()))
        return iter([r[0] for r in rows])

    def scan_pages(self, prefix: str, page: int = SCAN_PAGE) -> Iterator[list[str]]:
        """See :meth:`Engine.scan_pages`: one indexed read per page, from where the last stopped.

        Raises:
            InvalidInput: ``page`` is not a positive integer.
            EngineClosed: the engine was closed.
            EngineUnavailable: the file cannot be read.
        """
        check_page(page)
        upper = upper_bound(prefix)
        bound = () if upper is None else (upper,)
        now = self.now_ms()

        def read(op: str, low: str) -> list[str]:
            return [r[0] for r in self._read(_PAGES[op, upper is not None], (low, *bound, now, page))]

        return keyset_pages(read, prefix, page)

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        """Deliver messages of ``channel`` published by any process after this call.

        Raises:
            EngineClosed: the engine was closed.
            EngineUnavailable: the event table cannot be read.
        """
        self._check_open()
        try:
            return self._events.subscribe(channel, callback)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def raw_items(self) -> Iterator[tuple[str, str]]:
        """Every row of every table of the file (see :mod:`.raw`).

        Raises:
            EngineClosed: the engine was closed.
            EngineUnavailable: the file cannot be read.
        """
        return iter(raw_items(self._read))

    def internal_items(self) -> Iterator[tuple[str, str]]:
        """The rows of the event table (published messages kept for other processes' listeners)."""
        return iter(event_items(self._read))

    def drop_internal(self, wheres: Iterable[str]) -> int:
        """Delete the event rows named ``events:{id}``; ``secure_delete`` zeroes their bytes.

        Raises:
            EngineClosed: the engine was closed.
            EngineUnavailable: the file stayed locked past the busy timeout.
        """
        with self._writing() as cur:
            return drop_events(cur, wheres)

    def flush(self) -> None:
        """Delete every key (messages in flight stay deliverable).

        Raises:
            EngineClosed: the engine was closed.
            EngineUnavailable: the file stayed locked past the busy timeout.
        """
        with self._writing() as cur:
            self._cache.clear()
            for statement in _FLUSH:
                cur.execute(statement)

    def compact(self, *, vacuum: bool = False) -> None:
        """Checkpoint the WAL into the database file and truncate it (``wal_checkpoint(TRUNCATE)``);
        ``vacuum`` first rebuilds the file (``VACUUM``, its cost grows with the file).

        ``secure_delete`` zeroes deleted cells and freed pages, but a page split before the delete
        may have left a stale copy of a cell in a live page's unused space: only ``vacuum`` makes
        the file provably free of it (tests/services/lifecycle/test_forget_sqlite_bytes.py).

        Raises:
            EngineClosed: the engine was closed.
            EngineUnavailable: another connection kept the WAL busy past the busy timeout.
        """
        with self._lock:
            self._check_open()
            try:
                if vacuum:
                    self._cache.clear()
                    self._cur.execute("VACUUM")
                busy, _, _ = self._cur.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error as exc:
                raise self._error(exc) from exc
        if busy:
            raise EngineUnavailable(
                f"{redact_url(self.url)}: the WAL is in use by another connection; compact again later"
            )

    def close(self) -> None:
        """Stop the sweeper and listener threads and close the file; idempotent."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
        self._events.close()
        self._sweeper.join()
        with self._lock:
            if not self._inherited:
                self._conn.close()

    def sweep(self) -> int:
        """Remove up to ``sweep_limit`` expired keys now; returns how many went.

        Raises:
            EngineUnavailable: the file stayed locked past the busy timeout.
            EngineClosed: the engine was closed.
        """
        return self._sweep(self._busy_ms)

    # -- helpers -----------------------------------------------------------------------------
    def _sweep(self, busy_ms: int) -> int:
        with self._lock:
            self._check_open()
            now = self.now_ms()
            cur = self._cur
            try:
                if cur.execute(_SWEEP_PROBE, (now,)).fetchone() is None:
                    return 0
                self._cache.clear()
                if busy_ms != self._busy_ms:
                    cur.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
                try:
                    cur.execute("BEGIN IMMEDIATE")
                finally:
                    if busy_ms != self._busy_ms:
                        cur.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
                removed = int(cur.execute(_SWEEP, (now, self._sweep_limit)).rowcount)
                cur.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise self._error(exc) from exc
            return removed

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Cursor]:
        """One ``BEGIN IMMEDIATE`` transaction under the engine's lock: committed when the block
        ends; rolled back, and the SQLite error made a memstack one, when SQLite fails."""
        with self._lock:
            self._check_open()
            try:
                self._cur.execute("BEGIN IMMEDIATE")
                yield self._cur
                self._cur.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise self._error(exc) from exc

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            self._check_open()
            try:
                rows: list[tuple[Any, ...]] = self._cur.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise self._error(exc) from exc
            return rows

    def _maybe_prune(self) -> None:
        wall = time.time()
        if wall - self._last_prune >= _PRUNE_EVERY:
            self._last_prune = wall
            self._cur.execute(PRUNE, (wall - _EVENT_TTL,))

    def _rollback(self) -> None:
        self._cache.clear()  # it may hold rows of the writes being undone
        if self._conn.in_transaction:
            try:
                self._cur.execute("ROLLBACK")
            except sqlite3.Error:
                log.exception("rollback failed on %s", self.path)

    def _check_open(self) -> None:
        if self._closed.is_set():
            raise EngineClosed(f"{redact_url(self.url)}: engine is closed")
        if self._inherited:
            self._reopen()
        self._sweeper.ensure()

    def _error(self, exc: sqlite3.Error) -> EngineError:
        code = getattr(exc, "sqlite_errorcode", None)
        text = str(exc)
        busy = "locked" in text or "busy" in text
        if busy or (code is not None and code & 0xFF in _UNAVAILABLE):
            return EngineUnavailable(f"sqlite file {self.path}: {text}")
        return EngineError(f"sqlite file {self.path}: {text}")
