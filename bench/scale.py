"""Scale: bulk import, one big scope's growth curve, many small scopes, a save's cost as a scope grows.

    python bench/scale.py [--quick | --smoke] [--sizes 10000,100000] [--scopes N] [--url URL]

1. Bulk import (BM25 only, no embedder): ``save_many`` of the first size's entries into one scope,
   against a loop of ``save`` over 2,000 of them (200 with ``--smoke``), in another scope of the
   same engine. ``bulk_per_s`` is entries a second, ``bulk_vs_loop`` the ratio of the two rates
   (targets on SQLite: >= 20,000/s and >= 5), ``bulk_cpu_per_s`` the rate by the importing
   thread's CPU time (what a shared machine's other jobs do not inflate).
2. Growth curve: one scope filled to each size in turn (``save_many``, then one 384-dimensional
   vector per entry written in bulk), then 200 queries (30 with ``--smoke``) searched with BM25
   (a memory without embedder) and hybrid (the same scope with the embedder): p50/p99 in ms and
   the process's RSS. Each size prints its ratio to the first size's figure. The embedder is
   memstack's ``FakeEmbedder`` (hashed bag of words, deterministic, microseconds a query: nearly
   orthogonal vectors, the graph's worst case), or with ``--vectors clustered`` an embedder-like
   source (bench/_clustered.py: topics of 100 entries whose vectors cluster and whose texts share
   topic words; queries are new members of a topic): what a sentence embedder's users see. The
   query embedding a real model would add (~3.5 ms for MiniLM on this machine) is left out of the
   hybrid figures, as the targets say. Hybrid is measured twice: with every vector scanned
   (``exact``) and through the approximate graph (``ann``, :mod:`memstack.index.ann`, forced at
   every size so that its overlap is measured below the threshold too; memstack itself uses it from
   ``MEMSTACK_ANN_FROM`` vectors, 20,000 by default). ``overlap`` is the mean share of the exact
   top 10 that the graph-backed search also returns; ``ann_build_s`` the graph's build time. Index
   bytes per entry, from the scope cache's own counts: ``vec_b`` (the vectors: the decoded
   float copy and the search matrix, 4 bits a component once a graph backs it, and its id maps),
   ``graph_b`` (the graph, a bit a component from 256 dimensions, and its label table), ``bm25_b``.
3. Many small scopes: ``--scopes`` scopes of 10 entries (100,000 by default, 5,000 with
   ``--quick``, 100 with ``--smoke``), bulk-written, then 2,000 searches of random scopes
   (p50/p99, and the p99 of the searching thread's CPU time, which a busy machine's other jobs
   do not inflate) with ``MEMSTACK_INDEX_MEMORY_MB=256``; RSS before and after (target: the
   growth within the setting plus 10 %). The garbage collector is watched through ``gc.callbacks``:
   the collections by generation during the searches, the time of the full ones, the p99 of each
   search's wall time less the collections it waited for (``scopes_p99_less_gc_ms``), and the
   objects it tracks at the end (what a full collection walks).
4. Save cost (bench/_save_cost.py): a loop of 500 saves (50 with ``--smoke``) with a
   384-dimensional embedder (``FakeEmbedder(384)``, so the figures are the library's cost, not a
   model's) into one scope bulk-filled to 1,000 and to 100,000 entries (``--save-sizes``; 100 and
   1,000 with ``--smoke``, 1,000 and 10,000 with ``--quick``), each with its vectors: p50/p99 at
   each size, ``save_cost_ratio`` = p50 at the big size / p50 at the small one (target <= 1.5), and
   whether the background vectors keep up: ``save_pending`` entries still without a vector right
   after the loop, ``save_drain_s`` to write them, ``save_kept_up`` = 1 when they were all written
   within 10 s.

Engine: a temporary SQLite file, or ``--url`` (its tenant ``bench-scale``'s keys are flushed before
and after). The machine of a run is shared: figures move by tens of percent between runs.

Last line: ``RESULT bulk_per_s=… bulk_vs_loop=… bulk_cpu_per_s=… size=… bm25_p50_ms=… hybrid_p50_ms=…
hybrid_p99_ms=… ann_p50_ms=… ann_p99_ms=… overlap=… rss_mb=… vec_b=… graph_b=… bm25_b=…
scopes=… scopes_p50_ms=… scopes_p99_ms=… scopes_cpu_p99_ms=… scopes_p99_less_gc_ms=… scopes_gc2=…
scopes_gc2_ms=… scopes_rss_mb=… scopes_rss_growth_mb=…
save_small_p50_ms=… save_big_p50_ms=… save_cost_ratio=… save_pending=… save_kept_up=…`` (the growth
figures of the last size).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # shared cores: BLAS threads wait on each other
os.environ.setdefault("OMP_NUM_THREADS", "1")

import memstack
from _clustered import CLUSTER, ClusteredCorpus, ClusteredEmbedder  # bench/ is on sys.path
from _save_cost import save_cost
from _smoke import add_smoke, smoke_tag
from memstack.index import ann as graph
from memstack.index.changelog import log_changes
from memstack.search.embedders import Embedder, FakeEmbedder
from memstack.tiers.longterm import LongTermMemory, index_cache, snapshotter
from memstack.tiers.longterm.layout import ScopeKeys
from memstack.tiers.longterm.vectors import encode_vector

DIM = 384
TENANT = "bench-scale"
WORDS = [f"{a}{b}" for a in ("ka", "lo", "mi", "nu", "pe", "ra", "su", "ti", "vo", "ze") for b in range(400)]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(8, 30), cum_weights=_CUM))


_CUM = list(__import__("itertools").accumulate(1 / (i + 1) for i in range(len(WORDS))))  # Zipf-like


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _ms(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


def _fill(
    lt: LongTermMemory, count: int, rng: random.Random, embedder: Embedder | None, filled: int = 0
) -> float:
    """Add ``count`` entries after the ``filled`` ones (and their vectors when ``embedder``); returns
    the seconds it took."""
    started = time.perf_counter()
    for start in range(0, count, 5000):
        size = min(5000, count - start)
        if isinstance(embedder, ClusteredEmbedder):
            texts, vectors = embedder.corpus.entries(filled + start, size)
            embedder.topics = (filled + start + size) // CLUSTER or 1
        else:
            texts = [_text(rng) for _ in range(size)]
            vectors = embedder.embed(texts) if embedder is not None else None
        saved = lt.save_many([{"content": t} for t in texts], batch_size=1000)
        if embedder is not None and vectors is not None:  # the vectors a background worker would write
            keys = ScopeKeys.of(lt.engine, lt.scope)
            batch = lt.engine.batch()
            batch.hset(
                keys.vectors,
                {
                    e.id: encode_vector(embedder.model_id, t, v)
                    for e, t, v in zip(saved, texts, vectors, strict=True)
                },
            )
            log_changes(batch, keys, "vec", [e.id for e in saved])  # warm caches pick the vectors up
            batch.execute()
    return time.perf_counter() - started


def _searches(lt: LongTermMemory, queries: list[str], answers: list[list[str]] | None = None) -> list[float]:
    # A snapshot pending from the fill is written now, not in the background of the timed searches.
    snapshotter.snapshotter(lt.engine, lt.scope).flush(3600)
    lt.search(queries[0], limit=10)  # the first search builds the caches: not a steady-state figure
    times = []
    for query in queries:
        started = time.perf_counter()
        hits = lt.search(query, limit=10)
        times.append(time.perf_counter() - started)
        if answers is not None:
            answers.append([h.entry.id for h in hits])
    return times


def _hybrid(lt: LongTermMemory, queries: list[str], threshold: int) -> tuple[list[float], list[list[str]]]:
    """Hybrid searches with the graph used from ``threshold`` vectors. The exact answers (a threshold
    above the scope's size) come from a fresh cache that reads the float vectors from the engine: a
    graph-backed cache holds them in 4 bits only. The next call starts from a fresh cache too (it
    loads the graph the snapshot stored, or builds it)."""
    default, graph.ANN_FROM = graph.ANN_FROM, threshold
    exact = threshold > lt.engine.scard(lt.keys.ids)
    if exact:
        index_cache.clear_caches()
    answers: list[list[str]] = []
    try:
        times = _searches(lt, queries, answers)
    finally:  # later saves must not feed a graph forced on at every size
        graph.ANN_FROM = default
        if exact:
            index_cache.clear_caches()
    return times, answers


def _overlap(exact: list[list[str]], approx: list[list[str]]) -> float:
    return statistics.mean(len(set(a) & set(b)) / max(len(a), 1) for a, b in zip(exact, approx, strict=True))


def _bytes_per_entry(lt: LongTermMemory, size: int) -> dict[str, float]:
    cache = index_cache.scope_cache(lt.engine, lt.scope)
    with cache.lock:
        graphs = sum(a.nbytes for a in cache.anns.values())
        vectors = cache.vector_bytes() - graphs
        bm25 = sum(i.nbytes() for i in cache.indexes.values())
    return {"vec_b": vectors / size, "graph_b": graphs / size, "bm25_b": bm25 / size}


def bulk_import(
    mem: memstack.Memory, count: int, loop: int, rng: random.Random
) -> tuple[float, float, float]:
    items = [{"content": _text(rng)} for _ in range(count)]
    loop = min(loop, count)
    started, cpu = time.perf_counter(), time.thread_time()
    LongTermMemory(mem.engine, "bulk").save_many(items)
    bulk, bulk_cpu = count / (time.perf_counter() - started), count / (time.thread_time() - cpu)
    target = LongTermMemory(mem.engine, "loop")
    started = time.perf_counter()
    for item in items[:loop]:
        target.save(**item)
    looped = loop / (time.perf_counter() - started)
    print(
        f"bulk import: {count} entries {bulk:,.0f}/s (by its thread's CPU time {bulk_cpu:,.0f}/s); "
        f"a save loop of {loop}: {looped:,.0f}/s"
    )
    return bulk, bulk / looped, bulk_cpu


def growth(
    mem: memstack.Memory, sizes: list[int], queries: int, rng: random.Random, clustered: bool
) -> dict[str, float]:
    embedder: Embedder = FakeEmbedder(DIM)
    if clustered:
        embedder = ClusteredEmbedder(ClusteredCorpus(DIM, WORDS, _CUM))
    plain = LongTermMemory(mem.engine, "big")
    hybrid = LongTermMemory(plain.engine, "big", embedder=embedder)
    asked = [" ".join(rng.sample(WORDS[:2000], rng.randint(2, 4))) for _ in range(queries)]
    first: dict[str, float] = {}
    row: dict[str, float] = {}
    filled = 0
    for size in sizes:
        took = _fill(plain, size - filled, rng, embedder, filled)
        filled = size
        if isinstance(embedder, ClusteredEmbedder):  # noisy members of topics the scope holds
            asked = embedder.corpus.queries(queries, filled, random.Random(size))
        bm25 = _ms(_searches(plain, asked))
        exact_times, exact = _hybrid(hybrid, asked, 10**12)
        builds, at = graph.stats.builds, time.perf_counter()
        _hybrid(hybrid, asked[:1], 1)  # builds (or loads) the graph: its time is not a search's
        for thread in list(index_cache.scope_cache(hybrid.engine, hybrid.scope).building.values()):
            thread.join()  # a big scope's graph is built in the background: wait for it
        build_s = time.perf_counter() - at
        ann_times, approx = _hybrid(hybrid, asked, 1)
        both, ann = _ms(exact_times), _ms(ann_times)
        row = {"size": size, "fill_s": took, "bm25_p50_ms": bm25[0], "bm25_p99_ms": bm25[1]}
        row |= {
            "hybrid_p50_ms": both[0],
            "hybrid_p99_ms": both[1],
            "ann_p50_ms": ann[0],
            "ann_p99_ms": ann[1],
        }
        row |= {
            "overlap": _overlap(exact, approx),
            "ann_build_s": build_s,
            "ann_built": graph.stats.builds - builds,
        }
        row |= {"rss_mb": _rss_mb(), **_bytes_per_entry(hybrid, size)}
        first = first or row
        ratios = " ".join(
            f"{k} x{row[k] / first[k]:.2f}"
            for k in ("bm25_p50_ms", "hybrid_p50_ms", "ann_p50_ms", "rss_mb")
            if first[k]
        )
        print(
            f"size {size:>9,}: fill {took:.1f}s  bm25 p50 {bm25[0]:.2f} p99 {bm25[1]:.2f} ms  "
            f"hybrid exact p50 {both[0]:.2f} p99 {both[1]:.2f} ms  ann p50 {ann[0]:.2f} p99 {ann[1]:.2f} ms "
            f"(overlap {row['overlap']:.3f}, graph built in {build_s:.1f}s)  rss {row['rss_mb']:.0f} MB  "
            f"bytes/entry vectors {row['vec_b']:.0f} graph {row['graph_b']:.0f} bm25 {row['bm25_b']:.0f}\n"
            f"  vs the first size: {ratios}",
            flush=True,
        )
    return row


def scopes(mem: memstack.Memory, count: int, rng: random.Random) -> dict[str, float]:
    before = _rss_mb()
    for n in range(count):
        LongTermMemory(mem.engine, f"u{n}").save_many([{"content": _text(rng)} for _ in range(10)])
    times, cpu = [], []
    pauses = _GcPauses()
    gc.callbacks.append(pauses)
    try:
        for _ in range(2000):
            lt = LongTermMemory(mem.engine, f"u{rng.randrange(count)}")
            query = " ".join(rng.sample(WORDS[:500], 2))
            pauses.paused = 0.0
            started, thread = time.perf_counter(), time.thread_time()
            lt.search(query, limit=10)
            times.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - thread)
            pauses.searched(times[-1])
    finally:
        gc.callbacks.remove(pauses)
    (p50, p99), (_, cpu99) = _ms(times), _ms(cpu)
    _, no_gc99 = _ms(pauses.without)
    rss = _rss_mb()
    print(
        f"{count:,} scopes x 10: search p50 {p50:.2f} p99 {p99:.2f} ms (its thread's CPU time: p99 "
        f"{cpu99:.2f} ms; p99 less the collector's pauses {no_gc99:.2f} ms); rss {before:.0f} -> "
        f"{rss:.0f} MB; garbage collections during the searches: {pauses.counts} by generation, "
        f"full ones {pauses.full_ms:.1f} ms in all (longest {pauses.longest_ms:.1f} ms); "
        f"objects the collector tracks: {len(gc.get_objects()):,}"
    )
    return {
        "scopes": count,
        "scopes_p50_ms": p50,
        "scopes_p99_ms": p99,
        "scopes_cpu_p99_ms": cpu99,
        "scopes_p99_less_gc_ms": no_gc99,
        "scopes_gc2": pauses.counts[2],
        "scopes_gc2_ms": pauses.full_ms,
        "scopes_rss_mb": rss,
        "scopes_rss_growth_mb": rss - before,
    }


class _GcPauses:
    """A ``gc.callbacks`` hook: collections by generation, the time of full ones, and each search's
    wall time less the collections it waited for (what the p99 would be without them)."""

    def __init__(self) -> None:
        self.counts = [0, 0, 0]
        self.full_ms = self.longest_ms = 0.0
        self.without: list[float] = []
        self.paused = self._at = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        now = time.perf_counter()
        if phase == "start":
            self._at = now
            return
        took = now - self._at
        self.paused += took
        self.counts[info["generation"]] += 1
        if info["generation"] == 2:
            self.full_ms += took * 1000
            self.longest_ms = max(self.longest_ms, took * 1000)

    def searched(self, took: float) -> None:
        self.without.append(max(0.0, took - self.paused))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="10,000 entries, 5,000 scopes")
    parser.add_argument("--sizes", help="comma-separated scope sizes (default 10000,100000)")
    parser.add_argument("--scopes", type=int, help="small scopes (default 100,000)")
    parser.add_argument("--url", help="engine URL (default: a temporary SQLite file)")
    parser.add_argument("--growth-only", action="store_true", help="only the growth curve, no saves")
    parser.add_argument("--save-only", action="store_true", help="only the save-cost loop")
    parser.add_argument("--save-sizes", help="the save loop's two scope sizes (default 1000,100000)")
    parser.add_argument(
        "--vectors",
        choices=("hashed", "clustered"),
        default="hashed",
        help="hashed: FakeEmbedder's bag of words (the worst case for a graph); clustered: "
        "embedder-like topics whose texts agree with their vectors (bench/_clustered.py)",
    )
    add_smoke(parser)
    args = parser.parse_args()
    sizes = [200, 1000] if args.smoke else [10_000] if args.quick else [10_000, 100_000]
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
    count = args.scopes or (100 if args.smoke else 5_000 if args.quick else 100_000)
    queries, loop, saves = (30, 200, 50) if args.smoke else (200, 2000, 500)
    small, big = (100, 1000) if args.smoke else (1000, 10_000) if args.quick else (1000, 100_000)
    if args.save_sizes:
        small, big = (int(s) for s in args.save_sizes.split(","))
    os.environ["MEMSTACK_INDEX_MEMORY_MB"] = "256"
    rng = random.Random(37)
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite:///{tmp}/scale.db"
        # No embedder for the memory itself: with the default (the local model when installed) its
        # background follower would embed every entry the bench writes, in this process, while
        # the bulk import and the searches are timed. The growth curve brings its own embedder.
        with memstack.open(url, tenant=TENANT, embedder="none") as mem:
            if args.url:
                mem.engine.flush()
            row: dict[str, float] = {}
            bulk, ratio, bulk_cpu = 0.0, 0.0, 0.0
            if not args.save_only and not args.growth_only:
                bulk, ratio, bulk_cpu = bulk_import(mem, sizes[0], loop, rng)
            if not args.save_only:
                row = growth(mem, sizes, queries, rng, args.vectors == "clustered")
            if not args.growth_only:
                row |= save_cost(mem, (small, big), saves, lambda: _text(rng))
            if not args.growth_only and not args.save_only:
                row |= scopes(mem, count, rng)
            if args.url:
                mem.engine.flush()
    result = {"bulk_per_s": bulk, "bulk_vs_loop": ratio, "bulk_cpu_per_s": bulk_cpu, **row}
    text = " ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in result.items())
    print(f"RESULT {text}{smoke_tag(args)}")


if __name__ == "__main__":
    sys.exit(main())
