"""Concurrent searches of one graph-backed scope on Redis: the exact read outside the cache's lock.

    python bench/ann_concurrency.py [--quick | --smoke] [--size N] [--threads T] [--searches S] [--rtt-ms MS]

Starts its own redis-server on a free loopback port and fills one scope with ``--size`` entries
(50,000; 20,000 with ``--quick``, 1,000 with ``--smoke``) and a 384-dimensional vector each
(memstack's ``FakeEmbedder``, written in bulk as the background worker would), so that it is
searched through its graph (from ``MEMSTACK_ANN_FROM`` vectors, lowered here to the scope's size)
with its vectors held in 4 bits and each search's 100 best hits re-scored from the float vectors
read from Redis in one ``hmget`` (:mod:`memstack.tiers.longterm.ann_exact`).

Then ``--threads`` threads (4) each run ``--searches`` hybrid searches (100; 10 with ``--smoke``)
of the same scope, twice in the same run: as memstack does them (the read made without the scope
cache's lock, ``outside``) and with the read under the lock (``inside``: what a search did before,
the same code with ``_cached(defer=False)``), alternating the two five times (once with
``--smoke``) and keeping each one's best. Figures: searches a second for each, ``speedup`` =
outside / inside, and one thread's p50 for each (the read's own cost is unchanged). Each search's
hits are compared between the two: ``same=1`` when every one is identical (ids, scores, cosines).
``--rtt-ms``: each engine call first waits that long (a server across a network: loopback answers
in a few microseconds, a network in a few hundred; the read's share of a search grows with it).
The machine is shared: figures move by tens of percent between runs.

Last line: ``RESULT size=… threads=… inside_per_s=… outside_per_s=… speedup=… inside_p50_ms=…
outside_p50_ms=… same=… rtt_ms=…``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # shared cores: BLAS threads wait on each other
os.environ.setdefault("OMP_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _redis_servers import _start, free_port
from _smoke import add_smoke, smoke_tag
from memstack.engines import Engine
from memstack.engines.base import BatchResult, Op
from memstack.engines.forwarding import ForwardingEngine
from memstack.engines.redis import RedisEngine
from memstack.index import ann as graph
from memstack.index.changelog import log_changes
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory, index_cache, snapshotter
from memstack.tiers.longterm.layout import ScopeKeys
from memstack.tiers.longterm.vectors import encode_vector

WORDS = [f"w{n}" for n in range(2000)]
EMBEDDER = FakeEmbedder(dim=384)
Hit = tuple[str, float, float | None]


class Distant(ForwardingEngine):
    """The engine as if across a network: each call waits ``rtt`` seconds first (``--rtt-ms``)."""

    def __init__(self, inner: Engine, rtt: float) -> None:
        super().__init__(inner)
        self.rtt = rtt

    def execute(self, ops: Sequence[Op]) -> BatchResult:
        time.sleep(self.rtt)
        return super().execute(ops)

    def execute_many(self, batches: Sequence[Sequence[Op]]) -> list[BatchResult]:
        time.sleep(self.rtt)
        return super().execute_many(batches)


class ReadUnderLock(LongTermMemory):
    """The peer: the same searches with the exact read made under the scope cache's lock."""

    def _cached(self, *args: Any, defer: bool = True) -> Any:
        return super()._cached(*args, defer=False)


def fill(lt: LongTermMemory, size: int, rng: random.Random) -> None:
    for start in range(0, size, 5000):
        texts = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(min(5000, size - start))]
        saved = lt.save_many([{"content": t} for t in texts], batch_size=1000)
        keys = ScopeKeys.of(lt.engine, lt.scope)
        batch = lt.engine.batch()
        vectors = EMBEDDER.embed(texts)
        batch.hset(
            keys.vectors,
            {
                e.id: encode_vector(EMBEDDER.model_id, t, v)
                for e, t, v in zip(saved, texts, vectors, strict=True)
            },
        )
        log_changes(batch, keys, "vec", [e.id for e in saved])
        batch.execute()


def run(lt: LongTermMemory, queries: list[list[str]]) -> tuple[float, list[list[list[Hit]]]]:
    """Seconds for every thread's queries searched at once, and each thread's hits."""
    found: list[list[list[Hit]]] = [[] for _ in queries]
    start = threading.Barrier(len(queries) + 1)

    def work(n: int) -> None:
        start.wait()
        for query in queries[n]:
            found[n].append([(h.entry.id, h.score, h.vector) for h in lt.search(query, limit=10)])

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(queries))]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began, found


def p50_ms(lt: LongTermMemory, queries: list[str]) -> float:
    times = []
    for query in queries:
        began = time.perf_counter()
        lt.search(query, limit=10)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def measure(engine: Engine, args: argparse.Namespace, size: int, searches: int) -> str:
    rng = random.Random(7)
    fill(LongTermMemory(engine, "bench"), size, rng)
    outside = LongTermMemory(engine, "bench", embedder=EMBEDDER)
    inside = ReadUnderLock(engine, "bench", embedder=EMBEDDER)
    snapshotter.snapshotter(engine, "bench").flush(3600)
    queries = [
        [" ".join(rng.choice(WORDS) for _ in range(3)) for _ in range(searches)] for _ in range(args.threads)
    ]
    outside.search(queries[0][0], limit=10)  # builds the caches and the graph: not a steady-state figure
    cache = index_cache.scope_cache(engine, "bench")
    assert cache.anns, "the scope is searched through its graph"
    assert cache.vector_index(EMBEDDER.model_id, EMBEDDER.dim).quantised == 4
    best = {"inside": float("inf"), "outside": float("inf")}
    hits: dict[str, list[list[list[Hit]]]] = {}
    for _ in range(1 if args.smoke else 5):
        for name, lt in (("inside", inside), ("outside", outside)):
            took, hits[name] = run(lt, queries)
            best[name] = min(best[name], took)
    total = args.threads * searches
    rate = {name: total / took for name, took in best.items()}
    alone = {name: p50_ms(lt, queries[0]) for name, lt in (("inside", inside), ("outside", outside))}
    same = int(hits["inside"] == hits["outside"])
    print(f"{size} entries, {args.threads} threads x {searches} searches of one graph-backed scope on Redis")
    for name in ("inside", "outside"):
        print(f"  read {name:7} the lock: {rate[name]:8.1f} searches/s   one thread p50 {alone[name]:.2f} ms")
    return (
        f"RESULT size={size} threads={args.threads} inside_per_s={rate['inside']:.1f} "
        f"outside_per_s={rate['outside']:.1f} speedup={rate['outside'] / rate['inside']:.2f} "
        f"inside_p50_ms={alone['inside']:.2f} outside_p50_ms={alone['outside']:.2f} same={same}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="20,000 entries")
    parser.add_argument("--size", type=int, help="entries in the scope (default 50,000)")
    parser.add_argument("--threads", type=int, default=4, help="searching threads (default 4)")
    parser.add_argument("--searches", type=int, help="searches per thread (default 100)")
    parser.add_argument("--rtt-ms", type=float, default=0.0, help="a round trip added to each engine call")
    add_smoke(parser)
    args = parser.parse_args()
    size = args.size or (1_000 if args.smoke else 20_000 if args.quick else 50_000)
    searches = args.searches or (10 if args.smoke else 100)
    graph.ANN_FROM = min(graph.ANN_FROM, size)
    with tempfile.TemporaryDirectory() as root:
        port = free_port()
        server = _start(port, Path(root))
        engine = RedisEngine(f"redis://127.0.0.1:{port}/0")
        try:
            view = engine if not args.rtt_ms else Distant(engine, args.rtt_ms / 1000)
            result = measure(view, args, size, searches)
        finally:
            engine.close()
            server.terminate()
            server.wait()
    print(result + smoke_tag(args))


if __name__ == "__main__":
    main()
