"""A clustered engine outlives any node, the one named in its URL included.

One cluster of this test only: 3 primaries with a replica each and a short node timeout, so the
cluster fails over within seconds.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from _redis_cluster import own_cluster, wait_until
from memstack import ManualClock
from memstack.engines.redis import RedisEngine
from memstack.errors import EngineUnavailable, NotReplicated

NODE_TIMEOUT = ("--cluster-node-timeout", "1000")


@pytest.fixture(autouse=True)
def _needs_redis(redis_urls: tuple[str, str] | None) -> None:
    if redis_urls is None:
        pytest.skip("no redis-server on this machine")


def test_losing_the_url_node_costs_only_the_clusters_failover(tmp_path: Path, clock: ManualClock) -> None:
    with own_cluster(tmp_path, masters=3, replicas=1, extra=NODE_TIMEOUT) as cluster:
        url_port = cluster.ports[0]  # a primary: redis-cli makes the first nodes primaries
        engine = RedisEngine(f"redis+cluster://127.0.0.1:{url_port}?wait_replicas=1&wait_ms=1000", clock)
        try:
            keys = {
                cluster.primary_of(engine.tag(f"s{i}") + "k"): engine.tag(f"s{i}") + "k" for i in range(60)
            }
            assert url_port in keys and len(keys) == 3  # a key on every primary
            for key in keys.values():
                assert engine.set(key, "before")  # acknowledged by a replica too

            cluster.kill(url_port)
            lost = keys.pop(url_port)

            def served() -> bool:
                try:
                    return engine.get(lost) == "before"  # acknowledged writes survive the failover
                except EngineUnavailable:
                    return False

            started = time.monotonic()
            assert wait_until(served, timeout=30), "the engine never reached the promoted replica"
            assert time.monotonic() - started < 20
            for key in keys.values():
                assert engine.set(key, "after")
            # The promoted replica has no replica of its own: applied, but not acknowledged.
            with pytest.raises(NotReplicated):
                engine.set(lost, "after")
            assert engine.get(lost) == "after"
        finally:
            engine.close()
