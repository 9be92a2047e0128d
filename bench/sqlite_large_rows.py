"""SQLite engine: reads of small keys beside large values, in the engine's layout and in the old one.

    python bench/sqlite_large_rows.py [--quick | --smoke]

Three workloads on one SQLite file each, every one measured twice in the same run: beside large
values and beside small ones (the peer: the same operations on a file without large rows).

- ``get``: a small string key (``x:ver``) among ``--keys`` small keys, with a 3 MB string at the key
  that sorts just before it (``x:snap``), against the same file with a 10-byte string there.
- ``hget``: one field of a hash of ``--fields`` vector-sized values (1,536 bytes: 384 float32 in
  base64, what ``lt:{scope}:vec`` holds), against the same hash with 16-byte values.
- ``lrange``: the last 20 messages of a conversation's list (``conv:b:log``) among ``--keys`` small
  lists, with a 3 MB first element in the list that sorts just after it (``conv:c:log``: a range
  scan ends by reading the row after its last one), against the same file with a 10-byte element
  there.
- ``search``: a long-term BM25 search (``LongTermMemory``, top 10) on a scope of ``--entries``
  entries, with its BM25 snapshot (``lt:{scope}:snap``, hundreds of KB) in the file, against the same
  scope after deleting the snapshot. Every search reads the scope's ``ver`` key, which sorts beside
  the snapshot, to check that its cache is fresh.

Each workload runs on the engine's layout (``keys``, ``hashes`` and ``lists`` rowid tables, schema
version 2) and on the layout of schema version 1 (all three ``WITHOUT ROWID``), made by rebuilding them
through a second connection after the engine opened the file: the engine's SQL is the same on
both, so the ``v1`` figures are what memstack did before. ``*_ratio`` is p50 beside large values
over p50 beside small ones (1.0: large neighbours cost nothing); ``*_v1_vs_v2`` compares the
layouts beside large values; ``small_*_v2_vs_v1`` and ``new_key_v2_vs_v1`` are what the rowid
tables cost where no value is large (a GET, an HGET, a SET of a new key, each one transaction; a
rowid table with a text key is two b-trees: the key's index and the rows). ``--smoke``: tiny
sizes, every step once.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from memstack.engines.sqlite import SqliteEngine

VECTOR_BYTES = 1536
BIG_STRING = 3_000_000


def to_v1_layout(path: Path) -> None:
    """Rebuild ``keys``, ``hashes`` and ``lists`` as ``WITHOUT ROWID`` tables (schema version 1) under an
    engine already open on the file, with the expiry index and the triggers as they were."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        around = conn.execute(
            "SELECT type, name, sql FROM sqlite_master "
            "WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND tbl_name = 'keys'"
        ).fetchall()
        for kind, name, _ in around:
            conn.execute(f"DROP {kind} {name}")
        for table in ("keys", "hashes", "lists"):
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
            conn.execute(f"ALTER TABLE {table} RENAME TO {table}_v2")
            conn.execute(sql.rstrip().rstrip(";") + " WITHOUT ROWID")
            conn.execute(f"INSERT INTO {table} SELECT * FROM {table}_v2")
            conn.execute(f"DROP TABLE {table}_v2")
        for _, _, sql in around:
            conn.execute(sql)
        conn.execute("COMMIT")
    finally:
        conn.close()


def p50_us(run: Callable[[], object], reps: int) -> float:
    for _ in range(min(reps, 50)):
        run()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def bench_get(work: Path, layout: str, keys: int, reps: int, big: bool) -> float:
    path = work / f"get-{layout}-{big}.db"
    with SqliteEngine(f"sqlite:///{path}", sweep_interval=None) as engine:
        for start in range(0, keys, 1000):
            with engine.batch() as batch:
                for i in range(start, min(keys, start + 1000)):
                    batch.set(f"x:{i:07d}", "v" * 100)
        engine.set("x:snap", "s" * (BIG_STRING if big else 10))
        engine.set("x:ver", "12345")
    with Opened(path, layout) as engine:
        return p50_us(lambda: engine.get("x:ver"), reps)


def bench_lrange(work: Path, layout: str, keys: int, reps: int, big: bool) -> float:
    path = work / f"lrange-{layout}-{big}.db"
    with SqliteEngine(f"sqlite:///{path}", sweep_interval=None) as engine:
        for start in range(0, keys, 1000):
            with engine.batch() as batch:
                for i in range(start, min(keys, start + 1000)):
                    batch.rpush(f"conv:{i:07d}:log", "m" * 100)
        engine.rpush("conv:b:log", *(f"message {i}" for i in range(40)))
        engine.rpush("conv:c:log", "s" * (BIG_STRING if big else 10), "m" * 100)
    with Opened(path, layout) as engine:
        return p50_us(lambda: engine.lrange("conv:b:log", -20, -1), reps)


def bench_insert(work: Path, layout: str, keys: int, reps: int) -> float:
    """p50 of setting a new small key (one transaction each) among ``keys`` small keys."""
    path = work / f"insert-{layout}.db"
    with SqliteEngine(f"sqlite:///{path}", sweep_interval=None) as engine:
        for start in range(0, keys, 1000):
            with engine.batch() as batch:
                for i in range(start, min(keys, start + 1000)):
                    batch.set(f"x:{i * 2:07d}", "v" * 100)
    with Opened(path, layout) as engine:
        it = iter(range(1, 4 * reps, 2))
        return p50_us(lambda: engine.set(f"x:{next(it):07d}", "v" * 100), reps)


def bench_hget(work: Path, layout: str, fields: int, reps: int, big: bool) -> float:
    path = work / f"hget-{layout}-{big}.db"
    rng = random.Random(3)
    size = VECTOR_BYTES if big else 16
    with SqliteEngine(f"sqlite:///{path}", sweep_interval=None) as engine:
        for start in range(0, fields, 500):
            chunk = range(start, min(fields, start + 500))
            engine.hset("x:vec", {f"e{i}": rng.randbytes(size * 3 // 4).hex()[:size] for i in chunk})
    names = [f"e{rng.randrange(fields)}" for _ in range(reps)]
    with Opened(path, layout) as engine:
        it = iter(names * 2)
        return p50_us(lambda: engine.hget("x:vec", next(it)), reps)


class Opened:
    """The engine on ``path`` in ``layout`` (``v1``: the tables rebuilt first), closed at exit."""

    def __init__(self, path: Path, layout: str) -> None:
        self.engine = SqliteEngine(f"sqlite:///{path}", sweep_interval=None)
        if layout == "v1":
            # Under the open engine (opening would migrate the file): SQLite re-prepares the
            # engine's statements after the schema change.
            to_v1_layout(path)

    def __enter__(self) -> SqliteEngine:
        return self.engine

    def __exit__(self, *exc: object) -> None:
        self.engine.close()


def bench_search(work: Path, layout: str, entries: int, reps: int) -> tuple[float, float, int]:
    """Search p50 with the snapshot in the file, then after deleting it; and the snapshot's size."""
    import memstack

    path = work / f"search-{layout}.db"
    rng = random.Random(5)
    words = [f"w{i}" for i in range(3000)]
    docs = [" ".join(rng.choices(words, k=rng.randint(8, 30))) for _ in range(entries)]
    queries = [" ".join(rng.choices(words[50:], k=3)) for _ in range(200)]
    with memstack.open(f"sqlite:///{path}", embedder="none") as mem:
        lt = mem.long_term("s", embedder=None)
        lt.save_many({"id": f"e{i}", "content": text} for i, text in enumerate(docs))
        lt.search(queries[0], max_results=10)
        assert lt.snapshot()
    with memstack.open(f"sqlite:///{path}", embedder="none") as mem:
        if layout == "v1":
            to_v1_layout(path)
        lt = mem.long_term("s", embedder=None)
        engine = lt.engine
        snap = next(k for k in engine.scan("lt:") if k.endswith(":snap"))
        size = len(engine.get(snap) or "")
        lt.search(queries[0], max_results=10)  # builds the cache: not timed
        it = iter(queries * (2 + 2 * reps // len(queries)))
        with_snap = p50_us(lambda: lt.search(next(it), max_results=10), reps)
        engine.delete(snap)
        without = p50_us(lambda: lt.search(next(it), max_results=10), reps)
    return with_snap, without, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="small run (< 60 s)")
    parser.add_argument("--keys", type=int, default=None, help="small keys beside the large one")
    parser.add_argument("--fields", type=int, default=None, help="fields of the hash")
    parser.add_argument("--entries", type=int, default=None, help="entries of the long-term scope")
    add_smoke(parser)
    args = parser.parse_args()
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    keys = args.keys or {"smoke": 500, "quick": 20_000, "full": 100_000}[size]
    fields = args.fields or {"smoke": 300, "quick": 20_000, "full": 100_000}[size]
    entries = args.entries or {"smoke": 300, "quick": 20_000, "full": 100_000}[size]
    reps = {"smoke": 20, "quick": 2000, "full": 5000}[size]
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for layout in ("v2", "v1"):
            small, large = (bench_get(work, layout, keys, reps, big) for big in (False, True))
            print(
                f"{layout} get p50: {large:.1f} us beside a {BIG_STRING:,} byte value, "
                f"{small:.1f} us beside 10 bytes"
            )
            out[f"get_{layout}"], out[f"get_ratio_{layout}"], out[f"get_small_{layout}"] = (
                large,
                large / small,
                small,
            )
            out[f"insert_{layout}"] = bench_insert(work, layout, keys, reps)
            print(f"{layout} set of a new small key p50: {out[f'insert_{layout}']:.1f} us")
            small, large = (bench_hget(work, layout, fields, reps, big) for big in (False, True))
            print(
                f"{layout} hget p50: {large:.1f} us among {fields:,} {VECTOR_BYTES}-byte values, "
                f"{small:.1f} us among 16-byte ones"
            )
            out[f"hget_{layout}"], out[f"hget_ratio_{layout}"], out[f"hget_small_{layout}"] = (
                large,
                large / small,
                small,
            )
            small, large = (bench_lrange(work, layout, keys, reps, big) for big in (False, True))
            print(
                f"{layout} lrange (20 messages) p50: {large:.1f} us beside a {BIG_STRING:,} byte "
                f"element, {small:.1f} us beside 10 bytes"
            )
            out[f"lrange_{layout}"], out[f"lrange_ratio_{layout}"], out[f"lrange_small_{layout}"] = (
                large,
                large / small,
                small,
            )
            with_snap, without, snap_bytes = bench_search(work, layout, entries, max(20, reps // 10))
            print(
                f"{layout} long-term BM25 search p50 ({entries:,} entries): {with_snap:.0f} us with its "
                f"{snap_bytes:,} byte snapshot in the file, {without:.0f} us without"
            )
            out[f"search_{layout}"], out[f"search_ratio_{layout}"] = with_snap, with_snap / without
            sys.stdout.flush()
    line = " ".join(
        [
            f"get_p50_us={out['get_v2']:.1f} get_ratio={out['get_ratio_v2']:.2f}",
            f"get_v1_ratio={out['get_ratio_v1']:.2f} get_v1_vs_v2={out['get_v1'] / out['get_v2']:.2f}",
            f"hget_p50_us={out['hget_v2']:.1f} hget_ratio={out['hget_ratio_v2']:.2f}",
            f"hget_v1_ratio={out['hget_ratio_v1']:.2f} hget_v1_vs_v2={out['hget_v1'] / out['hget_v2']:.2f}",
            f"lrange_p50_us={out['lrange_v2']:.1f} lrange_ratio={out['lrange_ratio_v2']:.2f}",
            f"lrange_v1_ratio={out['lrange_ratio_v1']:.2f}",
            f"lrange_v1_vs_v2={out['lrange_v1'] / out['lrange_v2']:.2f}",
            f"small_lrange_v2_vs_v1={out['lrange_small_v2'] / out['lrange_small_v1']:.2f}",
            f"search_p50_us={out['search_v2']:.0f} search_ratio={out['search_ratio_v2']:.2f}",
            f"search_v1_ratio={out['search_ratio_v1']:.2f}",
            f"search_v1_vs_v2={out['search_v1'] / out['search_v2']:.2f}",
            f"small_get_v2_vs_v1={out['get_small_v2'] / out['get_small_v1']:.2f}",
            f"small_hget_v2_vs_v1={out['hget_small_v2'] / out['hget_small_v1']:.2f}",
            f"new_key_v2_vs_v1={out['insert_v2'] / out['insert_v1']:.2f}",
        ]
    )
    print(f"RESULT {line} keys={keys} fields={fields} entries={entries}{smoke_tag(args)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
