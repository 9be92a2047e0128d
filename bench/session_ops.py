"""Session tier throughput against the engine's bare write primitive, measured in the same run.

    python bench/session_ops.py [--url URL | --postgres] [--quick | --smoke]

Workload on one session: ``put`` (200-byte JSON values), ``get``, ``increment``, ``keys``. Peer
(the bare primitive of the same engine): Redis — redis-py ``SET`` one call at a time on the same
server; PostgreSQL — one psycopg ``INSERT … ON CONFLICT`` per transaction (autocommit, prepared)
into a two-column table of the same server and schema; SQLite — one ``INSERT`` per transaction on
a WAL file in the same directory; memory — a dict write under a ``threading.Lock``.

Round trips per put, on Redis: requests the client wrote to its sockets during the put phase
(redis-py ``send_packed_command`` calls, counted in this process) divided by the puts,
cross-checked against the server: the ``INFO commandstats`` delta of client-issued commands
(``EVALSHA``/``EVAL`` calls; the commands a script runs inside are counted by Redis too, so
``total_commands_processed`` over-counts round trips), summed over every primary of a cluster.
On PostgreSQL: requests the engine sent from this process during the put phase (each one
statement: one request and its reply) divided by the puts. The peer's INSERT commits like every
memstack batch, so the ratio depends on what a commit costs: it prints the server's settings and
adds ``durable=1`` (``fsync`` and ``synchronous_commit`` on, as production servers run) or
``durable=0`` to its ``RESULT`` line; ``put_vs_raw``'s target is for a durable server.
``--postgres`` starts one of its own (see ``bench/_postgres_bench.py``). Engines without a
network do one transaction (SQLite) or one lock hold (memory) per put: 1.
Phases run interleaved in rounds (one warm-up round, then the median of the others) because the
machine is shared and noisy. A breakdown of a put's time is printed from two extra peers: a one-op
engine batch and the put's own batch built by hand (same ops, no tier code).
Auto-summarisation is on but ``max_history`` is above the op count, so no summary runs during the
timed phases (a summary adds two round trips per ``max_history // 2`` writes). ``--smoke``: one
round of 50 ops per phase.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _postgres_bench import add_postgres, describe, durable, server_settings, target_url
from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from memstack.engines import Engine, open_engine
from memstack.tiers.session import SessionStore

# Every write stores a new value (an engine may skip rewriting an identical one).
TEXT = "x" * 170


def value(i: int) -> dict[str, Any]:
    """The i-th value: about 200 bytes of JSON."""
    return {"text": TEXT, "n": 10_000_000 + i, "ok": True}


def payloads(n: int) -> list[str]:
    """The first ``n`` values as JSON text, encoded ahead so the bare primitives only write."""
    return [json.dumps(value(i), separators=(",", ":")) for i in range(n)]


def _rate(n: int, run: Callable[[int], Any]) -> float:
    start = time.perf_counter()
    for i in range(n):
        run(i)
    return n / (time.perf_counter() - start)


def _redis_client(url: str) -> Any:
    import redis
    from redis.cluster import RedisCluster

    if "+cluster" in url.split("://", 1)[0]:
        return RedisCluster.from_url(url.replace("+cluster", "", 1), decode_responses=True)
    return redis.Redis.from_url(url, decode_responses=True)


def _script_calls(client: Any) -> int:
    """``EVALSHA`` + ``EVAL`` calls the server(s) processed so far."""
    from redis.cluster import RedisCluster

    nodes = (
        [client.get_redis_connection(n) for n in client.get_primaries()]
        if isinstance(client, RedisCluster)
        else [client]
    )
    total = 0
    for node in nodes:
        stats = node.info("commandstats")
        total += sum(int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in ("evalsha", "eval"))
    return total


class _SendCounter:
    """Counts requests redis-py writes to a socket in this process (one per round trip)."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self) -> _SendCounter:
        from redis.connection import AbstractConnection

        self._cls = AbstractConnection
        self._orig = AbstractConnection.send_packed_command
        orig = self._orig

        def counted(conn: Any, command: Any, check_health: bool = True) -> None:
            self.count += 1
            orig(conn, command, check_health)

        AbstractConnection.send_packed_command = counted  # type: ignore[method-assign]  # bench instrumentation
        return self

    def __exit__(self, *exc: object) -> None:
        self._cls.send_packed_command = self._orig  # type: ignore[method-assign]  # restore


Op = Callable[[int], Any]


class _StatementCounter:
    """Counts the requests the PostgreSQL engine sends from this process: each is one statement,
    one request and its reply (a statement's one-time preparation on a connection aside)."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self) -> _StatementCounter:
        from memstack.engines.postgres.pool import Requests

        self._cls = Requests
        self._orig = Requests.call
        orig = self._orig

        def counted(requests: Any, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return orig(requests, *args, **kwargs)

        Requests.call = counted  # type: ignore[method-assign]  # bench instrumentation
        return self

    def __exit__(self, *exc: object) -> None:
        self._cls.call = self._orig  # type: ignore[method-assign]  # restore


@contextlib.contextmanager
def raw_primitive(engine: Engine, url: str, texts: list[str]) -> Iterator[tuple[str, Op]]:
    """The engine's bare write primitive: (description, one write)."""
    if engine.name.startswith("redis"):
        client = _redis_client(url)
        key = f"bench:raw:{uuid.uuid4().hex}"
        try:
            yield "redis-py SET, one call at a time", lambda i: client.set(f"{key}:{i % 64}", texts[i])
        finally:
            for i in range(64):  # one key per call: cluster keys live in different slots
                client.delete(f"{key}:{i}")
            client.close()
    elif engine.name == "postgres":
        import psycopg

        from memstack.engines.postgres.url import parse

        target = parse(url, statement_timeout=30, tcp_timeout=10, connect_timeout=5)
        conn = psycopg.connect(target.conninfo, autocommit=True)
        table = f'"{target.schema}".bench_raw_{uuid.uuid4().hex[:12]}'
        conn.execute(f"CREATE TABLE {table} (k text PRIMARY KEY, v text)")
        upsert = f"INSERT INTO {table} (k, v) VALUES (%s, %s) ON CONFLICT (k) DO UPDATE SET v = excluded.v"

        def upsert_one(i: int) -> None:
            conn.execute(upsert, (f"k{i % 64}", texts[i]), prepare=True)

        try:
            yield "psycopg INSERT … ON CONFLICT, one per transaction (autocommit, prepared)", upsert_one
        finally:
            conn.execute(f"DROP TABLE {table}")
            conn.close()
    elif engine.name == "sqlite":
        path = url.split("sqlite:///", 1)[1]
        raw_path = Path(path).parent / f"bench-raw-{uuid.uuid4().hex}.db"
        conn = sqlite3.connect(raw_path, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)")

        def insert(i: int) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (f"k{i % 64}", texts[i]))
            conn.execute("COMMIT")

        try:
            yield "sqlite3 INSERT, one per transaction (WAL, synchronous=NORMAL)", insert
        finally:
            conn.close()
            for suffix in ("", "-wal", "-shm"):
                Path(str(raw_path) + suffix).unlink(missing_ok=True)
    else:
        lock = threading.Lock()
        data: dict[str, str] = {}

        def write(i: int) -> None:
            with lock:
                data[f"k{i % 64}"] = texts[i]

        yield "dict write under a threading.Lock", write


@contextlib.contextmanager
def engine_floor(engine: Engine, texts: list[str]) -> Iterator[tuple[Op, Op]]:
    """(a one-op batch, the put's own batch built by hand): the engine's share of a put."""
    tag = engine.tag(f"bench:floor:{uuid.uuid4().hex[:8]}")
    meta, keyset, history = f"{tag}:meta", f"{tag}:keys", f"{tag}:history"
    engine.hset(meta, {"created_at": "0"})
    entry = '{"op":"put","key":"k00","timestamp":1795236278.3459413}'

    def one(i: int) -> None:
        engine.set(f"{tag}:k{i % 64}", texts[i])

    def put_batch(i: int) -> None:
        key = f"{tag}:k{i % 64}"
        batch = engine.batch()
        batch.require_exists(meta)
        batch.set(key, texts[i])
        batch.sadd(keyset, key)
        batch.rpush(history, entry)
        batch.copy_ttl(meta, key, keyset, history)
        batch.execute()

    try:
        yield one, put_batch
    finally:
        engine.delete(meta, keyset, history, *(f"{tag}:k{i}" for i in range(64)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", help="engine URL (default: a temporary SQLite file)")
    parser.add_argument("--quick", action="store_true", help="small run (< 60 s)")
    add_postgres(parser)
    add_smoke(parser)
    args = parser.parse_args(argv)
    with target_url(args) as given:
        return run(args, given)


def run(args: argparse.Namespace, given: str | None) -> int:
    tmp = tempfile.TemporaryDirectory(prefix="memstack-bench-")
    url = given or f"sqlite:///{tmp.name}/bench.db"
    n, rounds = (50, 1) if args.smoke else (1000, 5) if args.quick else (10000, 5)
    engine = open_engine(url)
    server = ""
    try:
        if engine.name == "postgres":
            settings = server_settings(url)
            print(describe(settings))
            server = f" durable={int(durable(settings))}"
        store = SessionStore(engine, max_history=(rounds + 1) * 2 * n + 10, max_sessions=0)
        sid = f"bench-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        store.create(sid)
        print(f"engine {engine.name} ({url}); {rounds} interleaved rounds of {n} ops per phase (median)")
        texts = payloads(n)
        print(f"value: {len(texts[0])} bytes of JSON, a new one on every write")
        phases: dict[str, list[float]] = {}
        sends, puts = _SendCounter(), 0
        statements = _StatementCounter()
        admin = _redis_client(url) if engine.name.startswith("redis") else None
        scripts_before = _script_calls(admin) if admin is not None else 0
        with raw_primitive(engine, url, texts) as (raw_what, raw), engine_floor(engine, texts) as floor:
            one_op, put_batch = floor
            for rnd in range(rounds + 1):  # round 0 warms connections, caches and the interpreter up
                # The put phase alone runs under the send counter (round trips per put).
                counter: Any = sends if admin is not None else contextlib.nullcontext()
                if engine.name == "postgres":
                    counter = statements
                with counter:
                    put_rate = _rate(n, lambda i: store.put(sid, f"k{i % 64}", value(i)))
                if rnd:
                    phases.setdefault("put", []).append(put_rate)
                puts += n
                scripts_after = _script_calls(admin) if admin is not None else 0
                for name, run, count in (
                    ("raw", raw, n),
                    ("get", lambda i: store.get(sid, f"k{i % 64}"), n),
                    ("incr", lambda i: store.increment(sid, "counter"), n),
                    ("keys", lambda i: store.keys(sid), max(n // 5, 1)),
                    ("batch1", one_op, n),
                    ("put_batch", put_batch, n),
                ):
                    rate_now = _rate(count, run)
                    if rnd:
                        phases.setdefault(name, []).append(rate_now)
                if admin is not None:  # only the put phase's scripts count
                    scripts_before += _script_calls(admin) - scripts_after
        store.delete(sid)
        rate = {name: statistics.median(values) for name, values in phases.items()}
        if admin is not None:
            scripts = (_script_calls(admin) - scripts_before) / puts
            admin.close()
            round_trips = sends.count / puts
            how = f"client socket requests / puts; the server saw {scripts:.2f} EVALSHA per put"
        elif engine.name == "postgres":
            round_trips = statements.count / puts
            how = "requests the engine sent / puts"
        else:
            round_trips = 1.0
            how = "one transaction / one lock hold per put (no network)"
        put_ops, raw_ops = rate["put"], rate["raw"]
        print(f"put        {put_ops:10.0f} ops/s")
        print(f"get        {rate['get']:10.0f} ops/s")
        print(f"increment  {rate['incr']:10.0f} ops/s")
        print(f"keys       {rate['keys']:10.0f} ops/s (64 keys)")
        print(f"raw        {raw_ops:10.0f} ops/s ({raw_what})")
        print(f"put / raw  {put_ops / raw_ops:10.2f}")
        print(f"engine one-op batch {rate['batch1']:10.0f} ops/s")
        print(f"put's batch by hand {rate['put_batch']:10.0f} ops/s (same ops, no tier code)")
        us = {name: 1e6 / value for name, value in rate.items()}
        print(f"where a put's time goes: {us['put']:.1f} us = raw primitive {us['raw']:.1f}")
        print(f"  + engine batch floor {us['batch1'] - us['raw']:.1f}")
        print(f"  + the put's ops in the batch {us['put_batch'] - us['batch1']:.1f}")
        print(f"  + session tier (validation, JSON, layout) {us['put'] - us['put_batch']:.1f}")
        print(f"round trips per put {round_trips:.2f} ({how})")
        print(
            f"RESULT engine={engine.name} put_ops={put_ops:.0f} get_ops={rate['get']:.0f} "
            f"incr_ops={rate['incr']:.0f} keys_ops={rate['keys']:.0f} raw_ops={raw_ops:.0f} "
            f"batch1_ops={rate['batch1']:.0f} put_batch_ops={rate['put_batch']:.0f} "
            f"put_vs_raw={put_ops / raw_ops:.2f} round_trips_per_put={round_trips:.2f}"
            f"{server}{smoke_tag(args)}"
        )
    finally:
        engine.close()
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
