"""Wake-up latency of blocking reads on shared memory: from a write to the reader's return.

    python bench/shared_wakeup.py [--url URL | --postgres] [--quick | --smoke] [--rounds N]

Default engine: a temporary SQLite file. Two measurements, N rounds each (1,000; ``--quick``: 100;
``--smoke``: 5):

* same process: a reader thread blocked in ``get(key, wait=...)``, the main thread writes;
* cross process: a spawned Python process blocked in ``get``, this process writes.

Each written value carries ``time.perf_counter_ns()`` taken just before the write; the reader
subtracts it from ``perf_counter_ns()`` when it wakes. On Linux ``perf_counter`` is
``CLOCK_MONOTONIC``, one clock for every process of the machine, so the cross-process figure is
exact. Before each write the writer waits until the reader announced it is about to block, plus
2 ms so that it really is blocked. Prints the figures and ends with one ``RESULT`` line (``ratio``
= cross-process p50 / same-process p50, both measured in this run).

On PostgreSQL a message is delivered once its batch has committed, so a durable server (``fsync``
and ``synchronous_commit`` on: ``durable=1`` on the ``RESULT`` line, see ``bench/_postgres_bench.py``;
``--postgres`` starts one) puts a WAL flush in every wake-up. The floor is measured in the same run,
the same way: a bare psycopg writer commits an ``INSERT`` and a ``pg_notify`` in one statement (one
round trip, one commit) and a spawned process blocked in plain psycopg ``LISTEN`` takes the
notification: ``floor_p50_ms`` and ``cross_vs_floor_p50`` (memstack's cross-process p50 over it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from _postgres_bench import add_postgres, describe, durable, server_settings, target_url
from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from memstack.engines import open_engine
from memstack.tiers.shared import SharedMemory

SETTLE = 0.002  # seconds the writer leaves a reader to block after it announced itself
WAIT = 30.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _reader(memory: SharedMemory, prefix: str, rounds: int, announce: SharedMemory | None) -> list[float]:
    """Block on ``{prefix}x{i}`` for each round; returns latencies in ms."""
    latencies: list[float] = []
    for i in range(rounds):
        if announce is not None:
            announce[f"{prefix}rdy{i}"] = True
        value = memory.get(f"{prefix}x{i}", wait=WAIT)
        latencies.append((time.perf_counter_ns() - value["t"]) / 1e6)
    return latencies


def _writer(memory: SharedMemory, prefix: str, rounds: int, ready: threading.Event | None) -> None:
    for i in range(rounds):
        if ready is None:
            memory.get(f"{prefix}rdy{i}", wait=WAIT)
        else:
            ready.wait(WAIT)
            ready.clear()
        time.sleep(SETTLE)
        memory[f"{prefix}x{i}"] = {"t": time.perf_counter_ns()}


def same_process(url: str, name: str, rounds: int) -> list[float]:
    engine = open_engine(url)
    writer = SharedMemory(engine, name, enable_cache=False)
    reader = SharedMemory(engine, name, enable_cache=False)
    ready = threading.Event()
    result: list[float] = []

    class Announce:
        def __setitem__(self, key: str, value: object) -> None:
            ready.set()

    def run() -> None:
        result.extend(_reader(reader, "s", rounds, Announce()))  # type: ignore[arg-type]  # duck-typed announcer

    thread = threading.Thread(target=run)
    thread.start()
    _writer(writer, "s", rounds, ready)
    thread.join()
    reader.close()
    writer.clear()
    writer.close()
    engine.close()
    return result


def cross_process(url: str, name: str, rounds: int) -> list[float]:
    engine = open_engine(url)
    writer = SharedMemory(engine, name, enable_cache=False)
    child = subprocess.Popen(
        [sys.executable, __file__, "--child", url, name, str(rounds)], stdout=subprocess.PIPE, text=True
    )
    _writer(writer, "c", rounds, None)
    out, _ = child.communicate(timeout=WAIT * 4)
    if child.returncode != 0:
        raise SystemExit(f"reader process failed with code {child.returncode}")
    writer.clear()
    writer.close()
    engine.close()
    latencies: list[float] = json.loads(out.strip().splitlines()[-1])
    return latencies


def child(url: str, name: str, rounds: int) -> None:
    engine = open_engine(url)
    memory = SharedMemory(engine, name, enable_cache=False)
    latencies = _reader(memory, "c", rounds, memory)
    memory.close()
    engine.close()
    print(json.dumps(latencies))


def floor(url: str, rounds: int) -> list[float]:
    """Latencies (ms) of a bare psycopg INSERT + pg_notify committed in one statement, taken by
    plain ``LISTEN`` in a spawned process (PostgreSQL's own floor for a cross-process wake-up)."""
    import psycopg

    from memstack.engines.postgres.url import parse

    target = parse(url, statement_timeout=30, tcp_timeout=10, connect_timeout=5)
    table = f'"{target.schema}".bench_wakeup_{uuid.uuid4().hex[:12]}'
    channel = f"bench_wakeup_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(target.conninfo, autocommit=True) as writer:
        writer.execute(f"CREATE TABLE {table} (id bigserial PRIMARY KEY, message text NOT NULL)")
        try:
            child = subprocess.Popen(
                [sys.executable, __file__, "--floor-child", target.conninfo, channel, str(rounds)],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None
            statement = f"WITH e AS (INSERT INTO {table} (message) VALUES (%s) RETURNING message) "
            statement += "SELECT pg_notify(%s, message) FROM e"
            for _ in range(rounds):
                child.stdout.readline()  # the child is about to block
                time.sleep(SETTLE)
                writer.execute(statement, (str(time.perf_counter_ns()), channel), prepare=True)
            out, _ = child.communicate(timeout=WAIT * 4)
            if child.returncode != 0:
                raise SystemExit(f"floor reader failed with code {child.returncode}")
        finally:
            writer.execute(f"DROP TABLE {table}")
    latencies: list[float] = json.loads(out.strip().splitlines()[-1])
    return latencies


def floor_child(conninfo: str, channel: str, rounds: int) -> None:
    import psycopg

    latencies: list[float] = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"LISTEN {channel}")
        for _ in range(rounds):
            print("ready", flush=True)
            for note in conn.notifies(timeout=WAIT, stop_after=1):
                latencies.append((time.perf_counter_ns() - int(note.payload)) / 1e6)
    print(json.dumps(latencies))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="engine URL (default: a temporary SQLite file)")
    parser.add_argument("--quick", action="store_true", help="100 rounds instead of 1,000")
    parser.add_argument("--rounds", type=int, help="rounds per measurement (overrides --quick)")
    parser.add_argument("--child", nargs=3, metavar=("URL", "NAME", "ROUNDS"), help=argparse.SUPPRESS)
    parser.add_argument("--floor-child", nargs=3, help=argparse.SUPPRESS)
    add_postgres(parser)
    add_smoke(parser)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    if args.floor_child:
        floor_child(args.floor_child[0], args.floor_child[1], int(args.floor_child[2]))
        return
    with target_url(args) as given:
        run(args, given)


def run(args: argparse.Namespace, given: str | None) -> None:
    rounds = args.rounds or (5 if args.smoke else 100 if args.quick else 1000)
    floor_ms: list[float] = []
    server = ""
    with tempfile.TemporaryDirectory(prefix="memstack-bench-") as tmp:
        url = given or f"sqlite:///{Path(tmp) / 'wakeup.db'}"
        probe = open_engine(url)
        engine_name = probe.name
        probe.close()
        name = f"bench.{uuid.uuid4().hex[:12]}"
        print(f"engine {engine_name} ({url}), {rounds} rounds each" + (" (--quick)" if args.quick else ""))
        same = same_process(url, name, rounds)
        if engine_name == "memory":
            raise SystemExit(
                "memory:// lives in one process: no cross-process figure; use sqlite, redis or postgresql"
            )
        cross = cross_process(url, name, rounds)
        if engine_name == "postgres":
            settings = server_settings(url)
            print(describe(settings))
            server = f" durable={int(durable(settings))}"
            floor_ms = floor(url, rounds)
    rows = [("same process (thread)", same), ("cross process (spawned)", cross)]
    if floor_ms:
        rows.append(("floor: bare psycopg", floor_ms))
    print(f"{'write -> wake-up, ms':<26}{'p50':>9}{'p90':>9}{'p99':>9}{'max':>9}{'mean':>9}")
    for label, values in rows:
        print(
            f"{label:<26}{_percentile(values, 0.5):>9.3f}{_percentile(values, 0.9):>9.3f}"
            f"{_percentile(values, 0.99):>9.3f}{max(values):>9.3f}{statistics.fmean(values):>9.3f}"
        )
    same_p50, cross_p50 = _percentile(same, 0.5), _percentile(cross, 0.5)
    same_p99, cross_p99 = _percentile(same, 0.99), _percentile(cross, 0.99)
    ratio = cross_p50 / same_p50 if same_p50 else 0.0
    if floor_ms:
        floor_p50 = _percentile(floor_ms, 0.5)
        server += f" floor_p50_ms={floor_p50:.3f} cross_vs_floor_p50={cross_p50 / floor_p50:.2f}"
    print(
        f"RESULT engine={engine_name} same_process_p50_ms={same_p50:.3f} "
        f"cross_process_p50_ms={cross_p50:.3f} cross_process_p99_ms={cross_p99:.3f} "
        f"same_process_p99_ms={same_p99:.3f} "
        f"cross_vs_same_p50_ratio={ratio:.2f} rounds={rounds}{server}{smoke_tag(args)}"
    )


if __name__ == "__main__":
    main()
