"""The save-cost section of bench/scale.py: does a save cost more in a bigger scope?

For each size, a fresh scope is filled by ``save_many`` (BM25 and history as any save) with one
384-dimensional vector per entry written in bulk (what the background worker would have written),
one hybrid search builds the caches (the graph too from ``MEMSTACK_ANN_FROM`` vectors), and then a
loop of ``save`` runs through a ``LongTermMemory`` holding the embedder, timed one by one (p50,
p99). Right after the loop the entries still without a vector are counted (``pending``), then the
background worker is given ``DRAIN_BOUND`` seconds to write them (``drain_s``; ``kept_up`` when it
did). The embedder is memstack's ``FakeEmbedder(384)``: microseconds a text, so the figures are the
library's own cost, not a model's. Background snapshots run as they would in production
(from 5,000 entries): the loop starts with one being written in the background, which is what a
steady stream of saves meets every ``snapshotter.MAX_DELAY`` seconds (it used to make every save
wait for its serialisation: 114 ms a save at 20,000 entries).
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from collections.abc import Callable

import memstack
from memstack.index.changelog import log_changes
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory, index_cache, snapshotter
from memstack.tiers.longterm.layout import ScopeKeys
from memstack.tiers.longterm.vectors import encode_vector

__all__ = ["DRAIN_BOUND", "save_cost"]

DIM = 384
DRAIN_BOUND = 10.0
"""Seconds the background vectors get, after the loop, to catch up."""


def _fill(lt: LongTermMemory, count: int, text: Callable[[], str], embedder: FakeEmbedder) -> None:
    keys = ScopeKeys.of(lt.engine, lt.scope)
    for start in range(0, count, 5000):
        texts = [text() for _ in range(min(5000, count - start))]
        saved = lt.save_many([{"content": t} for t in texts], batch_size=1000)
        vectors = embedder.embed(texts)
        batch = lt.engine.batch()
        pairs = zip(saved, texts, vectors, strict=True)
        batch.hset(keys.vectors, {e.id: encode_vector(embedder.model_id, t, v) for e, t, v in pairs})
        log_changes(batch, keys, "vec", [e.id for e in saved])
        batch.execute()


def _loop(lt: LongTermMemory, saves: int, text: Callable[[], str]) -> dict[str, float]:
    # What a steady stream of saves meets every MAX_DELAY seconds: the scope's snapshot being
    # written in the background (a scope under snapshotter.MIN_ENTRIES writes none, as in production).
    snapshot = threading.Thread(target=snapshotter.take, args=(lt.engine, lt.scope))
    if lt.engine.scard(lt.keys.ids) >= snapshotter.MIN_ENTRIES:
        snapshot.start()
    times = []
    for _ in range(saves):
        at = time.perf_counter()
        lt.save(content=text())
        times.append(time.perf_counter() - at)
    if snapshot.ident is not None:
        snapshot.join()
    keys = ScopeKeys.of(lt.engine, lt.scope)
    pending = lt.engine.scard(keys.ids) - lt.engine.hlen(keys.vectors)
    at = time.perf_counter()
    drained = lt.flush_embeddings(DRAIN_BOUND)
    ordered = sorted(times)
    return {
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        "pending": pending,
        "drain_s": time.perf_counter() - at,
        "kept_up": float(drained and lt.engine.scard(keys.ids) == lt.engine.hlen(keys.vectors)),
    }


def save_cost(
    mem: memstack.Memory, sizes: tuple[int, int], saves: int, text: Callable[[], str]
) -> dict[str, float]:
    """The save loop at each of ``sizes`` (entries already in the scope); returns the RESULT fields."""
    embedder = FakeEmbedder(DIM)
    rows = []
    for size in sizes:
        scope = f"savecost{size}"
        _fill(LongTermMemory(mem.engine, scope), size, text, embedder)
        lt = LongTermMemory(mem.engine, scope, embedder=embedder)
        lt.search(text(), limit=10)  # builds the caches, as any live scope has them
        for thread in list(index_cache.scope_cache(lt.engine, scope).building.values()):
            thread.join()  # a big scope's graph is built in the background: a live scope has it
        snapshotter.snapshotter(lt.engine, scope).flush(3600)  # the fill's own snapshot, done
        row = _loop(lt, saves, text)
        rows.append(row)
        print(
            f"save loop of {saves} at {size:,} entries (FakeEmbedder {DIM} dims): p50 {row['p50_ms']:.2f} "
            f"p99 {row['p99_ms']:.2f} ms; vectors pending after the loop {row['pending']:.0f}, drained "
            f"in {row['drain_s']:.2f}s (bound {DRAIN_BOUND:.0f}s: "
            f"{'kept up' if row['kept_up'] else 'NOT kept up'})",
            flush=True,
        )
        lt.close()
    first, last = rows[0], rows[-1]
    ratio = last["p50_ms"] / first["p50_ms"]
    print(f"save p50 at {sizes[-1]:,} / at {sizes[0]:,}: x{ratio:.2f} (target <= 1.5)")
    return {
        "save_small_p50_ms": first["p50_ms"],
        "save_small_p99_ms": first["p99_ms"],
        "save_big_p50_ms": last["p50_ms"],
        "save_big_p99_ms": last["p99_ms"],
        "save_cost_ratio": ratio,
        "save_pending": last["pending"],
        "save_drain_s": last["drain_s"],
        "save_kept_up": last["kept_up"],
    }


def _demo() -> None:  # python bench/_save_cost.py: the section alone at small sizes
    import tempfile

    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp, memstack.open(f"sqlite:///{tmp}/s.db", embedder="none") as mem:
        save_cost(mem, (200, 2000), 100, lambda: " ".join(f"w{rng.randrange(5000)}" for _ in range(12)))


if __name__ == "__main__":
    _demo()
