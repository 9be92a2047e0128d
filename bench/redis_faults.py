"""The standalone Redis engine under connection kills and a server restart.

    python bench/redis_faults.py [--url URL] [--quick | --smoke]

Phase 1: calls (a mix of reads, two-key put batches and increments), each preceded by
``CLIENT KILL`` of every connection but the bench's own admin one, at a random gap of 0-0.5 s
before the call (inside and outside the engine's idle-check window). Phase 2: load from one
thread while the server is stopped and started again on the same port (no persistence).

Figures: the share of calls after a kill that succeeded; increments applied twice (a returned
value more than one above the last known one); put batches seen half applied (its two keys
differ); and how long after the restarted server first answered ``PING`` a call still failed.
Without ``--url`` the bench starts its own ``redis-server``; with ``--url`` the restart phase is
skipped (``errors_after_restart_ms=-1``): the bench does not stop servers it did not start.
``--smoke``: 6 calls in the kill phase and the short restart phase.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import redis as redis_py

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _redis_servers import _start, free_port
from _smoke import add_smoke, smoke_tag
from memstack.engines.redis import RedisEngine
from memstack.foundation.errors import MemstackError


class Checker:
    """Runs the call mix on one engine and keeps the tallies."""

    def __init__(self, engine: RedisEngine) -> None:
        self.engine = engine
        self.counter = int(engine.get("bench:n") or 0)
        self.double_applied = 0
        self.partial_writes = 0
        self.puts = 0
        self.failures: list[float] = []  # monotonic times of every failed engine call

    def call(self, kind: str) -> None:
        """One call of ``kind`` (read, put, incr); raises what the engine raises."""
        engine = self.engine
        if kind == "read":
            a, b = engine.mget(["bench:a", "bench:b"])
            if a != b:
                self.partial_writes += 1
        elif kind == "put":
            self.puts += 1
            with engine.batch() as batch:
                batch.set("bench:a", str(self.puts))
                batch.set("bench:b", str(self.puts))
        else:
            try:
                value = engine.incr("bench:n")
            except MemstackError:
                self.resync()
                raise
            if value > self.counter + 1:
                self.double_applied += 1
            self.counter = int(value)

    def resync(self) -> None:
        """After a failed increment: it may or may not have applied (once)."""
        for _ in range(1000):
            try:
                now = int(self.engine.get("bench:n") or 0)
            except MemstackError:
                self.failures.append(time.monotonic())
                time.sleep(0.005)
                continue
            if now > self.counter + 1:
                self.double_applied += 1
            self.counter = now
            return


def kill_phase(
    engine: RedisEngine, admin: redis_py.Redis, calls: int, rnd: random.Random
) -> tuple[int, int, int]:
    """Calls each right after CLIENT KILL: (succeeded, double applied, partial writes)."""
    checker = Checker(engine)
    ok = 0
    for i in range(calls):
        admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        time.sleep(rnd.uniform(0.0, 0.5))
        kind = ("read", "put", "incr")[i % 3]
        try:
            checker.call(kind)
            ok += 1
        except MemstackError as exc:
            print(f"  call {i} ({kind}) failed: {exc}")
    final = [engine.get("bench:a"), engine.get("bench:b")]
    checker.partial_writes += final[0] != final[1]
    print(f"kill phase: {ok}/{calls} calls succeeded right after CLIENT KILL")
    print(
        f"  increments applied twice: {checker.double_applied}, half-applied puts: {checker.partial_writes}"
    )
    return ok, checker.double_applied, checker.partial_writes


def restart_phase(port: int, workdir: Path, engine: RedisEngine, quick: bool) -> tuple[float, int, int]:
    """Load while the server restarts; (ms from the server's return to the last failure, failures,
    double applied)."""
    checker = Checker(engine)
    stop = threading.Event()
    failures = checker.failures
    calls = [0]

    def load() -> None:
        i = 0
        while not stop.is_set():
            try:
                checker.call(("read", "put", "incr")[i % 3])
            except MemstackError:
                failures.append(time.monotonic())
                time.sleep(0.005)  # a dead server refuses at once: no need to spin
            i += 1
            calls[0] += 1

    thread = threading.Thread(target=load)
    thread.start()
    time.sleep(0.5 if quick else 2.0)
    server = SERVERS.pop()
    server.terminate()
    server.wait(timeout=10)
    time.sleep(0.5)
    # Started without the helper's own wait for PING (it polls every 50 ms): the probe below
    # notes the first moment the server answers, to the millisecond.
    binary = shutil.which("redis-server") or "redis-server"
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    args += ["--dir", str(workdir), "--daemonize", "no", "--loglevel", "warning"]
    SERVERS.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    probe = redis_py.Redis(port=port, socket_timeout=1)
    while True:
        try:
            if probe.ping():
                break
        except redis_py.RedisError:
            time.sleep(0.001)
    up = time.monotonic()
    probe.close()
    time.sleep(1.0 if quick else 3.0)
    stop.set()
    thread.join()
    late = [f - up for f in failures if f > up]
    after_ms = max(late) * 1000 if late else 0.0
    print(f"restart phase: {calls[0]} calls, {len(failures)} failed while down or after")
    print(f"  last failure {after_ms:.1f} ms after the server answered again ({len(late)} failures after)")
    return after_ms, checker.double_applied, checker.partial_writes


SERVERS: list[Any] = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a standalone Redis to use (default: start one)")
    parser.add_argument("--quick", action="store_true", help="fewer calls (under 60 s)")
    add_smoke(parser)
    args = parser.parse_args()
    calls = 6 if args.smoke else 150 if args.quick else 1000
    rnd = random.Random(18)
    with tempfile.TemporaryDirectory(prefix="memstack-redis-faults-") as tmp:
        port = 0
        if args.url:
            url = args.url
        else:
            port = free_port()
            SERVERS.append(_start(port, Path(tmp)))
            url = f"redis://127.0.0.1:{port}/0"
        try:
            engine = RedisEngine(url)
            engine.flush()
            admin = redis_py.Redis.from_url(url)
            ok, doubles, partial = kill_phase(engine, admin, calls, rnd)
            admin.close()
            after_ms, restart_doubles, restart_partial = -1.0, 0, 0
            if port:
                after_ms, restart_doubles, restart_partial = restart_phase(
                    port, Path(tmp), engine, args.quick or args.smoke
                )
            engine.close()
        finally:
            for server in SERVERS:
                server.terminate()
                server.wait(timeout=10)
    print(
        f"RESULT killed_success_ratio={ok / calls:.3f} double_applied={doubles + restart_doubles} "
        f"partial_writes={partial + restart_partial} errors_after_restart_ms={after_ms:.0f}"
        f"{smoke_tag(args)}"
    )


if __name__ == "__main__":
    main()
