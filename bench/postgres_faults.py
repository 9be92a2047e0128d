"""The PostgreSQL engine under terminated backends and server restarts, with writers under load.

    python bench/postgres_faults.py [--url URL --pgdata DIR] [--quick | --smoke]

Writers (threads) each run write batches ``rpush(log, i); incr(n); set(a, i); set(b, i)`` with
a fresh ``i`` per call, and read ``mget(a, b)`` now and then. Phase 1: a prober kills every
backend of the engine (``pg_terminate_backend``) before each of its own calls, at a random gap of
0-0.2 s, while the writers run. Phase 2: the server is restarted under the same load, once with
``pg_ctl restart -m fast`` and once with ``-m immediate`` (a crash: no shutdown checkpoint).

Figures: ``killed_success_ratio``, the share of the prober's calls (each right after a kill)
that succeeded; ``acked_lost``, writes whose call returned but whose ``i`` is not in the log at
the end; ``double_applied``, ``i`` found twice in a log (each is sent once; a retry must not apply
it again); ``partial_writes``, reads that saw ``a != b`` plus writers whose counter and log
disagree at the end (the four ops of a batch apply together or not at all). Calls that fail while
the server is down are expected; their outcome is unknown (they may have been applied, once).
Without ``--url`` the bench starts its own server (durable settings); with ``--url`` the restart
phase needs ``--pgdata`` (the data directory, run with ``pg_ctl`` as its owner) and is skipped
without it (``restarts=0``). ``--smoke``: 6 prober calls, two writers, both restarts.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _postgres_server import as_owner, bin_dir, postgres_server, wait_ready, with_schema
from _smoke import add_smoke, smoke_tag
from memstack.engines.postgres import PostgresEngine
from memstack.foundation.errors import MemstackError

APP = "memstack-faults"


class Writer:
    """One writer thread's batches and tallies."""

    def __init__(self, engine: PostgresEngine, index: int) -> None:
        self.engine = engine
        self.keys = [f"w{index}:{name}" for name in ("log", "n", "a", "b")]
        self.acked: list[int] = []
        self.next = 0
        self.calls = self.failures = self.partial_reads = 0

    def step(self) -> None:
        log, n, a, b = self.keys
        i = self.next
        self.next += 1
        self.calls += 1
        try:
            if i % 4 == 3:
                first, second = self.engine.mget([a, b])
                self.partial_reads += first != second
                return
            with self.engine.batch() as batch:
                batch.rpush(log, str(i))
                batch.incr(n)
                batch.set(a, str(i))
                batch.set(b, str(i))
            self.acked.append(i)
        except MemstackError:
            self.failures += 1
            time.sleep(0.005)  # a server that is down refuses at once: no need to spin

    def verdict(self) -> tuple[int, int, int]:
        """(acked writes lost, writes applied twice, counter/log disagreements) at the end."""
        log, n, _, _ = self.keys
        seen = Counter(int(v) for v in self.engine.lrange(log, 0, -1))
        lost = sum(1 for i in self.acked if seen[i] == 0)
        twice = sum(1 for count in seen.values() if count > 1)
        count = int(self.engine.get(n) or 0)
        return lost, twice, int(count != sum(seen.values()))


@contextlib.contextmanager
def load(engine: PostgresEngine, writers: int) -> Iterator[list[Writer]]:
    """Writers stepping in threads until the block ends."""
    stop = threading.Event()
    crew = [Writer(engine, i) for i in range(writers)]

    def run(writer: Writer) -> None:
        while not stop.is_set():
            writer.step()

    threads = [threading.Thread(target=run, args=(w,)) for w in crew]
    for thread in threads:
        thread.start()
    try:
        yield crew
    finally:
        stop.set()
        for thread in threads:
            thread.join()


def kill_all(admin_url: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
            (APP,),
        ).fetchone()
    return int(row[0]) if row else 0


def kill_phase(engine: PostgresEngine, admin_url: str, calls: int, rnd: random.Random) -> tuple[int, int]:
    """The prober's calls, each after killing every backend: (succeeded, backends killed)."""
    prober = Writer(engine, 999)
    ok = killed = 0
    for _ in range(calls):
        killed += kill_all(admin_url)
        time.sleep(rnd.uniform(0.0, 0.2))
        failures = prober.failures
        prober.step()
        ok += prober.failures == failures
    print(f"kill phase: {ok}/{calls} calls succeeded right after killing every backend ({killed} killed)")
    lost, twice, split = prober.verdict()
    if lost or twice or split:
        print(f"  prober: lost {lost}, applied twice {twice}, counter/log disagree {split}")
    return ok, killed


def restart(pgdata: str, mode: str, url: str) -> float:
    """Restart the server in ``mode``; returns when it answers again (seconds it took)."""
    bindir = bin_dir()
    if bindir is None:
        raise SystemExit("pg_ctl not found")
    started = time.monotonic()
    log = str(Path(pgdata).parent / "restart.log") if Path(pgdata).parent.is_dir() else "/dev/null"
    command = as_owner([str(bindir / "pg_ctl"), "-D", pgdata, "-m", mode, "-w", "-t", "60", "-l", log])
    command.append("restart")
    # No pipes: the restarted server would hold them open after pg_ctl returns.
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    wait_ready(url)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a PostgreSQL server to use (default: start one)")
    parser.add_argument("--pgdata", help="its data directory, for the restart phase")
    parser.add_argument("--quick", action="store_true", help="fewer calls (under 60 s)")
    add_smoke(parser)
    args = parser.parse_args()
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)  # reconnect attempts while the server is down
    calls, writers = (6, 2) if args.smoke else (60, 2) if args.quick else (400, 4)
    pause = 0.2 if args.smoke else 1.0  # load before and after each restart
    rnd = random.Random(18)
    with contextlib.ExitStack() as stack:
        if args.url:
            base, pgdata = args.url, args.pgdata
        else:
            server = stack.enter_context(postgres_server(settings=()))  # durable: fsync, synchronous commit
            base, pgdata = server.url, str(server.pgdata)
        url = with_schema(base, "bench_faults") + f"&application_name={APP}"
        engine = PostgresEngine(url, max_connections=writers + 2)
        stack.callback(engine.close)
        engine.flush()
        with load(engine, writers) as crew:
            ok, killed = kill_phase(engine, base, calls, rnd)
            restarts = 0
            if pgdata:
                for mode in ("fast", "immediate"):
                    time.sleep(pause)
                    took = restart(pgdata, mode, base)
                    restarts += 1
                    print(f"restart -m {mode}: the server answered again after {took:.2f} s")
                time.sleep(pause)
        results = [w.verdict() for w in crew]
        lost = sum(r[0] for r in results)
        twice = sum(r[1] for r in results)
        partial = sum(r[2] for r in results) + sum(w.partial_reads for w in crew)
        total = sum(w.calls for w in crew)
        failed = sum(w.failures for w in crew)
        acked = sum(len(w.acked) for w in crew)
        print(f"writers: {total} calls, {acked} writes acknowledged, {failed} calls failed (server down)")
        print(f"acked writes lost {lost}, applied twice {twice}, partial writes {partial}")
    print(
        f"RESULT killed_success_ratio={ok / calls:.3f} acked_lost={lost} double_applied={twice} "
        f"partial_writes={partial} calls={total} failed_calls={failed} backends_killed={killed} "
        f"restarts={restarts}{smoke_tag(args)}"
    )


if __name__ == "__main__":
    main()
