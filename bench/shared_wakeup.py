"""Wake-up latency of blocking reads on shared memory: from a write to the reader's return.

    python bench/shared_wakeup.py [--url URL] [--quick | --smoke] [--rounds N]

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

from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from memstack.engines import open_engine
from memstack.shared import SharedMemory

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="engine URL (default: a temporary SQLite file)")
    parser.add_argument("--quick", action="store_true", help="100 rounds instead of 1,000")
    parser.add_argument("--rounds", type=int, help="rounds per measurement (overrides --quick)")
    parser.add_argument("--child", nargs=3, metavar=("URL", "NAME", "ROUNDS"), help=argparse.SUPPRESS)
    add_smoke(parser)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    rounds = args.rounds or (5 if args.smoke else 100 if args.quick else 1000)
    with tempfile.TemporaryDirectory(prefix="memstack-bench-") as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'wakeup.db'}"
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
    rows = [("same process (thread)", same), ("cross process (spawned)", cross)]
    print(f"{'write -> wake-up, ms':<26}{'p50':>9}{'p90':>9}{'p99':>9}{'max':>9}{'mean':>9}")
    for label, values in rows:
        print(
            f"{label:<26}{_percentile(values, 0.5):>9.3f}{_percentile(values, 0.9):>9.3f}"
            f"{_percentile(values, 0.99):>9.3f}{max(values):>9.3f}{statistics.fmean(values):>9.3f}"
        )
    same_p50, cross_p50 = _percentile(same, 0.5), _percentile(cross, 0.5)
    same_p99, cross_p99 = _percentile(same, 0.99), _percentile(cross, 0.99)
    ratio = cross_p50 / same_p50 if same_p50 else 0.0
    print(
        f"RESULT engine={engine_name} same_process_p50_ms={same_p50:.3f} "
        f"cross_process_p50_ms={cross_p50:.3f} cross_process_p99_ms={cross_p99:.3f} "
        f"same_process_p99_ms={same_p99:.3f} "
        f"cross_vs_same_p50_ratio={ratio:.2f} rounds={rounds}{smoke_tag(args)}"
    )


if __name__ == "__main__":
    main()
