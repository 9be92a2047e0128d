"""What a tenant's scan on Redis holds: each key once, remembering at most ``SCAN_SEEN`` keys.

    python bench/scan_memory.py [--quick | --smoke] [--keys N]

Starts its own redis-server on a free loopback port, writes ``N`` keys under tenant ``acme`` and
reads them back through the tenant view's ``scan("")``, counting them, under ``tracemalloc``. The
peer, in the same run, is the scan as it was: the same pages, every key given remembered in one set
(the price of each key once when ``SCAN`` may repeat one). Figures: the Python memory each peaks
at, and the time each takes. The bound here is a quarter of the keys (the library's is ``SCAN_SEEN``),
so the bounded scan reads the keyspace in parts, as it does past ``SCAN_SEEN``. ``--quick``: 300,000
keys; ``--smoke``: 2,000 keys and a bound of 500.
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _redis_servers import _start, free_port
from _smoke import keys_to_run, smoke_tag
from memstack.engines import _once
from memstack.engines.base import Op
from memstack.engines.prefixed import tenant_engine
from memstack.engines.redis import RedisEngine


def remember_all(pages: Iterator[list[str]]) -> Iterator[str]:
    """The scan as it was: every key given remembered until the scan ends."""
    seen: set[str] = set()
    for page in pages:
        for key in page:
            if key not in seen:
                seen.add(key)
                yield key


def measured(scan: Callable[[], Iterator[str]]) -> tuple[int, float, float]:
    """Keys counted, peak MB and seconds of one full scan."""
    tracemalloc.start()
    started = time.perf_counter()
    count = sum(1 for _ in scan())
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return count, peak, seconds


def main() -> None:
    args, n = keys_to_run(__doc__, smoke=2_000, quick=300_000, default=1_000_000)
    limit = 500 if args.smoke else max(1, n // 4)
    with tempfile.TemporaryDirectory() as root:
        port = free_port()
        server = _start(port, Path(root))
        engine = RedisEngine(f"redis://127.0.0.1:{port}/0")
        try:
            view = tenant_engine(engine, "acme")
            batch: list[Op] = []
            for i in range(n):
                batch.append(("set", (f"k{i:07d}", "v", None, False, False, False)))
                if len(batch) == 1000 or i == n - 1:
                    view.execute(batch)
                    batch = []
            pages = lambda: view.inner.scan_pages(view.prefix, view.page)  # noqa: E731 - the view's own pages
            bounded = measured(lambda: _once.scan_once(pages, limit))
            before = measured(lambda: remember_all(pages()))
        finally:
            engine.close()
            server.terminate()
            server.wait()
    assert bounded[0] == before[0] == n, (bounded[0], before[0], n)
    print(f"{n} keys, bound {limit}: bounded scan peaks at {bounded[1]:.1f} MB in {bounded[2]:.2f} s")
    print(f"remembering every key: {before[1]:.1f} MB in {before[2]:.2f} s")
    print(
        f"RESULT keys={n} bound={limit} bounded_mb={bounded[1]:.1f} all_mb={before[1]:.1f} "
        f"memory_ratio={before[1] / bounded[1]:.2f} bounded_s={bounded[2]:.2f} all_s={before[2]:.2f} "
        f"time_ratio={bounded[2] / before[2]:.2f}{smoke_tag(args)}"
    )


if __name__ == "__main__":
    main()
