"""Session tier throughput against the engine's bare write primitive, measured in the same run.

    python bench/session_ops.py [--url URL] [--quick]

Workload on one session: ``put`` (200-byte JSON values), ``get``, ``increment``, ``keys``. Peer
(the bare primitive of the same engine): Redis — redis-py ``SET`` one call at a time on the same
server; SQLite — one ``INSERT`` per transaction on a WAL file in the same directory; memory — a
dict write under a ``threading.Lock``.

Round trips per put, on Redis: requests the client wrote to its sockets during the put phase
(redis-py ``send_packed_command`` calls, counted in this process) divided by the puts,
cross-checked against the server: the ``INFO commandstats`` delta of client-issued commands
(``EVALSHA``/``EVAL`` calls; the commands a script runs inside are counted by Redis too, so
``total_commands_processed`` over-counts round trips), summed over every primary of a cluster.
Engines without a network do one transaction (SQLite) or one lock hold (memory) per put: 1.
Auto-summarisation is on but ``max_history`` is above the op count, so no summary runs during the
timed phases (a summary adds two round trips per ``max_history // 2`` writes).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstack.engines import Engine, open_engine
from memstack.session import SessionStore

VALUE = {"text": "x" * 170, "n": 12345, "ok": True}
assert len(json.dumps(VALUE, separators=(",", ":"))) >= 200 - 8


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


def raw_rate(engine: Engine, url: str, n: int, payload: str) -> tuple[str, float]:
    """The engine's bare primitive: (description, ops per second)."""
    if engine.name.startswith("redis"):
        client = _redis_client(url)
        key = f"bench:raw:{uuid.uuid4().hex}"
        try:
            rate = _rate(n, lambda i: client.set(f"{key}:{i % 64}", payload))
        finally:
            for i in range(min(n, 64)):  # one key per call: cluster keys live in different slots
                client.delete(f"{key}:{i}")
            client.close()
        return "redis-py SET, one call at a time", rate
    if engine.name == "sqlite":
        path = url.split("sqlite:///", 1)[1]
        raw_path = Path(path).parent / f"bench-raw-{uuid.uuid4().hex}.db"
        conn = sqlite3.connect(raw_path, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)")

            def insert(i: int) -> None:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (f"k{i % 64}", payload))
                conn.execute("COMMIT")

            return "sqlite3 INSERT, one per transaction (WAL)", _rate(n, insert)
        finally:
            conn.close()
            for suffix in ("", "-wal", "-shm"):
                Path(str(raw_path) + suffix).unlink(missing_ok=True)
    lock = threading.Lock()
    data: dict[str, str] = {}

    def write(i: int) -> None:
        with lock:
            data[f"k{i % 64}"] = payload

    return "dict write under a threading.Lock", _rate(n, write)


def engine_floor(engine: Engine, n: int, payload: str) -> tuple[float, float]:
    """(one-op batch rate, rate of the put's own batch built by hand): the engine's share of a put."""
    base = f"bench:floor:{uuid.uuid4().hex[:8]}"
    tag = engine.tag(base)
    meta, keyset, history = f"{tag}:meta", f"{tag}:keys", f"{tag}:history"
    engine.hset(meta, {"created_at": "0"})
    entry = '{"op":"put","key":"k00","timestamp":1795236278.3459413}'

    def one(i: int) -> None:
        engine.set(f"{tag}:k{i % 64}", payload)

    def put_batch(i: int) -> None:
        key = f"{tag}:k{i % 64}"
        batch = engine.batch()
        batch.require_exists(meta)
        batch.set(key, payload)
        batch.sadd(keyset, key)
        batch.rpush(history, entry)
        for dst in (key, keyset, history):
            batch.copy_ttl(dst, meta)
        batch.execute()

    try:
        return _rate(n, one), _rate(n, put_batch)
    finally:
        engine.delete(meta, keyset, history, *(f"{tag}:k{i}" for i in range(64)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", help="engine URL (default: a temporary SQLite file)")
    parser.add_argument("--quick", action="store_true", help="small run (< 60 s)")
    args = parser.parse_args(argv)
    tmp = tempfile.TemporaryDirectory(prefix="memstack-bench-")
    url = args.url or f"sqlite:///{tmp.name}/bench.db"
    n = 1500 if args.quick else 10000
    engine = open_engine(url)
    try:
        store = SessionStore(engine, max_history=4 * n + 10, max_sessions=0)
        sid = f"bench-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        store.create(sid)
        payload = json.dumps(VALUE, separators=(",", ":"))
        print(f"engine {engine.name} ({url}); {n} ops per phase; value {len(payload)} bytes JSON")
        if engine.name.startswith("redis"):
            admin = _redis_client(url)
            before = _script_calls(admin)
            with _SendCounter() as sends:
                put_ops = _rate(n, lambda i: store.put(sid, f"k{i % 64}", VALUE))
            scripts = (_script_calls(admin) - before) / n
            admin.close()
            round_trips = sends.count / n
            how = f"client socket requests / puts; server saw {scripts:.2f} EVALSHA per put"
        else:
            put_ops = _rate(n, lambda i: store.put(sid, f"k{i % 64}", VALUE))
            round_trips = 1.0
            how = "one transaction / one lock hold per put (no network)"
        floor_ops, batch_ops = engine_floor(engine, n, payload)
        get_ops = _rate(n, lambda i: store.get(sid, f"k{i % 64}"))
        incr_ops = _rate(n, lambda i: store.increment(sid, "counter"))
        keys_ops = _rate(max(n // 5, 1), lambda i: store.keys(sid))
        raw_what, raw_ops = raw_rate(engine, url, n, payload)
        store.delete(sid)
        print(f"put        {put_ops:10.0f} ops/s")
        print(f"get        {get_ops:10.0f} ops/s")
        print(f"increment  {incr_ops:10.0f} ops/s")
        print(f"keys       {keys_ops:10.0f} ops/s (64 keys)")
        print(f"raw        {raw_ops:10.0f} ops/s ({raw_what})")
        print(f"put / raw  {put_ops / raw_ops:10.2f}")
        us_put, us_raw, us_floor, us_batch = (1e6 / x for x in (put_ops, raw_ops, floor_ops, batch_ops))
        print(f"engine one-op batch {floor_ops:10.0f} ops/s")
        print(f"put's batch by hand {batch_ops:10.0f} ops/s (same ops, no tier code)")
        print(f"where a put's time goes: {us_put:.1f} us = raw primitive {us_raw:.1f}")
        print(f"  + engine batch floor {us_floor - us_raw:.1f}")
        print(f"  + the put's ops in the batch {us_batch - us_floor:.1f}")
        print(f"  + session tier (validation, JSON, layout) {us_put - us_batch:.1f}")
        print(f"round trips per put {round_trips:.2f} ({how})")
        print(
            f"RESULT engine={engine.name} put_ops={put_ops:.0f} get_ops={get_ops:.0f} "
            f"incr_ops={incr_ops:.0f} keys_ops={keys_ops:.0f} raw_ops={raw_ops:.0f} "
            f"batch1_ops={floor_ops:.0f} put_batch_ops={batch_ops:.0f} put_vs_raw={put_ops / raw_ops:.2f} "
            f"round_trips_per_put={round_trips:.2f}"
        )
    finally:
        engine.close()
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
