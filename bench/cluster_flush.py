"""A tenant's flush on a Redis Cluster: its keys deleted in batches sent together, against one call each.

    python bench/cluster_flush.py [--quick | --smoke] [--keys N]

Starts its own 3-primary Redis Cluster on free loopback ports, writes ``N`` keys without a hash tag
(so of some ``min(N, 16384)`` slots) under tenant ``acme``, and times the tenant's ``flush()``: a
scan page at a time, each page's keys in slot batches sent as one pipeline per node
(:meth:`Engine.execute_many`). Then it writes the same keys again and flushes them as before:
the same scan pages, each key deleted by a ``delete`` call of its own (one round trip each). It
prints both, keys per second and the ratio. On loopback a round trip costs little, so the ratio
is what the server's own work leaves of it; across a network each saved round trip saves its
latency too. It takes no ``--url``: the figures need a cluster of their own.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _redis_cluster import own_cluster
from _smoke import keys_to_run, smoke_tag
from memstack.engines.base import Op
from memstack.engines.prefixed import tenant_engine
from memstack.engines.redis import RedisEngine


def fill(engine: RedisEngine, keys: list[str]) -> None:
    """Write ``keys`` (one batch each, sent together)."""
    batch: list[list[Op]] = [[("set", (key, "v", None, False, False, False))] for key in keys]
    for start in range(0, len(batch), 1000):
        engine.execute_many(batch[start : start + 1000])


def main() -> None:
    args, n = keys_to_run(__doc__, smoke=200, quick=2_000, default=20_000)
    with tempfile.TemporaryDirectory() as root, own_cluster(Path(root)) as cluster:
        engine = RedisEngine(f"redis+cluster://127.0.0.1:{cluster.ports[0]}")
        try:
            view = tenant_engine(engine, "acme")
            keys = [f"t:acme:k{i}" for i in range(n)]
            fill(engine, keys)
            started = time.perf_counter()
            view.flush()
            together = time.perf_counter() - started
            assert not list(view.scan(""))
            fill(engine, keys)
            started = time.perf_counter()
            for page in engine.scan_pages("t:acme:"):
                for key in page:
                    engine.delete(key)
            alone = time.perf_counter() - started
            assert not list(view.scan(""))
        finally:
            engine.close()
    print(
        f"flush of {n} untagged keys, batches sent together: {together * 1000:.0f} ms "
        f"({n / together:,.0f} keys/s)"
    )
    print(f"as before, one call each: {alone * 1000:.0f} ms ({n / alone:,.0f} keys/s)")
    print(
        f"RESULT keys={n} flush_ms={together * 1000:.1f} before_ms={alone * 1000:.1f} "
        f"speedup={alone / together:.1f}{smoke_tag(args)}"
    )


if __name__ == "__main__":
    main()
