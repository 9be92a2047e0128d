"""Session tier throughput against the engine's bare write primitive, measured in the same run.

    python bench/session_ops.py [--url URL] [--quick]

Workload on one session: ``put`` (200-byte JSON values), ``get``, ``increment``, ``keys``. Peer
(the bare primitive of the same engine): Redis — redis-py ``SET`` one call at a time on the same
server; SQLite — one ``INSERT`` per transaction on a WAL file in the same directory; memory — a
dict write under a ``threading.Lock``.

Round trips per put: on Redis, the server's ``total_commands_processed`` delta over the put phase
(summed over every node of a cluster, minus the ``INFO`` calls themselves) divided by the puts;
engines without a network do one transaction (SQLite) or one lock hold (memory) per put: 1.
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


def _commands_processed(client: Any) -> int:
    info = client.info("stats")
    if isinstance(info, dict) and "total_commands_processed" not in info:  # cluster: per node
        return sum(int(node["total_commands_processed"]) for node in info.values())
    return int(info["total_commands_processed"])


def _info_cost(client: Any) -> int:
    """Commands one ``_commands_processed`` call adds (1 per node)."""
    info = client.info("stats")
    return len(info) if "total_commands_processed" not in info else 1


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
        counter = None
        if engine.name.startswith("redis"):
            counter = _redis_client(url)
            cost = _info_cost(counter)
            before = _commands_processed(counter)
        put_ops = _rate(n, lambda i: store.put(sid, f"k{i % 64}", VALUE))
        if counter is not None:
            delta = _commands_processed(counter) - before - cost
            round_trips = delta / n
            counter.close()
            how = "server total_commands_processed delta / puts"
        else:
            round_trips = 1.0
            how = "one transaction / one lock hold per put (no network)"
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
        print(f"round trips per put {round_trips:.2f} ({how})")
        print(
            f"RESULT engine={engine.name} put_ops={put_ops:.0f} get_ops={get_ops:.0f} "
            f"incr_ops={incr_ops:.0f} keys_ops={keys_ops:.0f} raw_ops={raw_ops:.0f} "
            f"put_vs_raw={put_ops / raw_ops:.2f} "
            f"round_trips_per_put={round_trips:.2f}"
        )
    finally:
        engine.close()
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
