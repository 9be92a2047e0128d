"""What a put's SQL alone costs: memstack's ``MemstackStore`` and LangGraph's ``SqliteStore``,
each store's statements replayed with no Python around them, in the same run.

    python bench/langgraph_put_floor.py [--quick | --smoke]

Why: ``put_vs_lg_sqlite`` in ``bench/langgraph_store.py`` stays under its 1.0 target. A memstack
put writes the item, its ``ids`` member, the namespace version and its change-log entry in one
guarded transaction (what keeps every process's search index fresh and a racing writer from
losing an update); LangGraph's put writes one row. This bench asks whether any amount of Python
tuning could close the gap: if memstack's SQL alone costs more than LangGraph's whole put, no
Python change can.

How, per store (both on temporary files, SQLite with WAL and ``synchronous=NORMAL``; the data of
``bench/langgraph_store.py``, 100 namespaces):
1. Warm up with the first items, checkpoint the WAL away and copy the file (the snapshot).
2. Capture: the next items are put with the store's cursor wrapped, recording every statement
   with its parameters.
3. A second store, warmed up alike, puts the same items unwrapped: the real put time.
4. Replay: the captured statements run on a copy of the snapshot, through a connection with the
   store's own settings, timed per put. Statements keep their parameters, so both replays hit
   SQLite's statement cache as the stores do.
Steps 3 and 4 run in chunks, the stores taking turns, so a noisy stretch hits both.

The last line: ``RESULT engine=sqlite put_us=… sql_us=… lg_put_us=… lg_sql_us=… ceiling_vs_lg_sqlite=…``
(microseconds per put; the ceiling is ``lg_put_us / sql_us``, the put ratio memstack would reach
if all its Python cost nothing).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.sqlite import SqliteStore

import memstack
from _smoke import add_smoke, smoke_tag
from langgraph_store import value
from memstack.doors.integrations.langgraph import MemstackStore
from memstack.engines.sqlite.schema import connect

Statement = tuple[str, str, Any]  # (method, sql, parameters)
Record = Callable[[list[Statement] | None], None]  # start recording into a list, or stop (None)
CHUNKS = 10


class Recorder:
    """A cursor or connection stand-in that records each statement, then runs it."""

    def __init__(self, target: Any, log: list[Statement]) -> None:
        self._target = target
        self._log = log

    def execute(self, sql: str, params: Any = ()) -> Any:
        self._log.append(("execute", sql, params))
        result = self._target.execute(sql, params)
        return self if result is self._target else result

    def executemany(self, sql: str, params: Any) -> Any:
        rows = list(params)
        self._log.append(("executemany", sql, rows))
        self._target.executemany(sql, rows)
        return self

    def cursor(self) -> Recorder:
        return Recorder(self._target.cursor(), self._log)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._target)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def memstack_store(path: Path) -> tuple[MemstackStore, Callable[[], None], Record]:
    # As memstack.open gives it (tenant "default"); no embedder: no follower thread reads meanwhile.
    memory = memstack.open(f"sqlite:///{path}", embedder="none")
    engine: Any = memory.engine
    while getattr(engine, "inner", None) is not None:  # the tenant view: its SQLite engine below
        engine = engine.inner
    # the SQLite engine's cursor is private: this bench wraps it

    bare = engine._cur

    def record(log: list[Statement] | None) -> None:
        engine._cur = bare if log is None else Recorder(bare, log)

    return MemstackStore(memory), memory.close, record


def lg_store(path: Path) -> tuple[SqliteStore, Callable[[], None], Record]:
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    store = SqliteStore(conn)
    store.setup()

    def record(log: list[Statement] | None) -> None:
        store.conn = conn if log is None else Recorder(conn, log)  # type: ignore[assignment]  # a recording stand-in

    return store, conn.close, record


def replay_conn(kind: str, path: Path) -> sqlite3.Connection:
    """A connection to ``path`` with the settings the store's own connection has."""
    if kind == "memstack":
        return connect(str(path), 5.0)
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def checkpoint(path: Path) -> None:
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def run_statements(cur: sqlite3.Cursor, statements: list[Statement]) -> None:
    for method, sql, params in statements:
        if method == "execute":
            cur.execute(sql, params).fetchall()
        else:
            cur.executemany(sql, params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="500 measured puts instead of 4,000")
    add_smoke(parser)
    args = parser.parse_args()
    warm, measured = (100, 50) if args.smoke else (1000, 500) if args.quick else (2000, 4000)
    rng = random.Random(7)
    names = [("floor", f"ns{n:03d}") for n in range(100)]
    items = [(names[i % 100], f"item{i}", value(rng, i)) for i in range(warm + measured)]
    makers = {"memstack": memstack_store, "lg": lg_store}
    put_s = dict.fromkeys(makers, 0.0)
    sql_s = dict.fromkeys(makers, 0.0)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        captured: dict[str, list[list[Statement]]] = {}
        timed: dict[str, BaseStore] = {}
        closers: list[Callable[[], None]] = []
        replays: dict[str, sqlite3.Cursor] = {}
        for kind, make in makers.items():
            store, close, record = make(tmp / f"{kind}-capture.db")
            closers.append(close)
            for item in items[:warm]:
                store.put(*item)
            checkpoint(tmp / f"{kind}-capture.db")
            shutil.copy(tmp / f"{kind}-capture.db", tmp / f"{kind}-replay.db")
            captured[kind] = []
            for item in items[warm:]:
                log: list[Statement] = []
                record(log)
                store.put(*item)
                captured[kind].append(log)
            record(None)
            other, close_other, _ = make(tmp / f"{kind}-timed.db")
            closers.append(close_other)
            for item in items[:warm]:
                other.put(*item)
            timed[kind] = other
            conn = replay_conn(kind, tmp / f"{kind}-replay.db")
            closers.append(conn.close)
            replays[kind] = conn.cursor()
        step = measured // CHUNKS
        for lo in range(0, measured, step):
            for kind in makers:
                start = time.perf_counter()
                for item in items[warm + lo : warm + lo + step]:
                    timed[kind].put(*item)
                put_s[kind] += time.perf_counter() - start
                start = time.perf_counter()
                for statements in captured[kind][lo : lo + step]:
                    run_statements(replays[kind], statements)
                sql_s[kind] += time.perf_counter() - start
        counts = {kind: statistics.mean(len(s) for s in captured[kind]) for kind in makers}
        for close in reversed(closers):
            close()
    us = {kind: (put_s[kind] / measured * 1e6, sql_s[kind] / measured * 1e6) for kind in makers}
    print(f"{measured:,} puts after {warm:,}, 100 namespaces; microseconds per put")
    print(f"{'store':<12}{'statements':>11}{'whole put':>11}{'SQL alone':>11}{'Python':>9}")
    for kind, (put, sql) in us.items():
        print(f"{kind:<12}{counts[kind]:>11.1f}{put:>11.1f}{sql:>11.1f}{put - sql:>9.1f}")
    (put, sql), (lg_put, lg_sql) = us["memstack"], us["lg"]
    print(
        f"RESULT engine=sqlite put_us={put:.1f} sql_us={sql:.1f} lg_put_us={lg_put:.1f} "
        f"lg_sql_us={lg_sql:.1f} ceiling_vs_lg_sqlite={lg_put / sql:.3f}{smoke_tag(args)}"
    )


if __name__ == "__main__":
    main()
