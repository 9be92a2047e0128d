"""A clustered engine outlives any node, the one named in its URL included.

One cluster of this test only: 3 primaries with a replica each and a short node timeout, so the
cluster fails over within seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from redis.crc import key_slot

from _redis_cluster import cluster_ok, own_cluster, wait_until
from memstack import ManualClock
from memstack.engines.redis import RedisEngine
from memstack.foundation.errors import EngineUnavailable, NotReplicated

# Replicas sync at once: by default a primary waits 5 s for more replicas to share one diskless sync.
NODE_TIMEOUT = ("--cluster-node-timeout", "2000", "--repl-diskless-sync-delay", "0")


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

            assert wait_until(served, timeout=60), "the engine never reached the promoted replica"
            # On a loaded machine other nodes may be suspected for a moment too: settle first.
            assert wait_until(lambda: cluster_ok([p for p in cluster.ports if p != url_port]), timeout=60)
            for key in keys.values():
                assert engine.set(key, "after")
            # The promoted replica has no replica of its own: applied, but not acknowledged.
            with pytest.raises(NotReplicated):
                engine.set(lost, "after")
            assert engine.get(lost) == "after"
        finally:
            engine.close()


def test_batches_follow_ask_during_a_slot_migration(tmp_path: Path, clock: ManualClock) -> None:
    """A slot half migrated: a read of a moved key follows ASK to the importing node; a write
    batch (its key plus its batch id, split between the nodes) gets TRYAGAIN until the migration
    ends, then follows MOVED."""
    with own_cluster(tmp_path) as cluster:
        engine = RedisEngine(f"redis+cluster://127.0.0.1:{cluster.ports[0]}", clock, socket_timeout=0.5)
        try:
            key = engine.tag("migrating") + "k"
            slot = key_slot(key.encode())
            assert engine.set(key, "1")
            source = cluster.primary_of(key)
            target = next(p for p in cluster.ports if p != source)
            clients = {p: cluster.client(p) for p in cluster.ports}
            ids = {p: c.execute_command("CLUSTER", "MYID") for p, c in clients.items()}
            clients[target].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source])
            clients[source].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target])

            def migrate(*keys: str) -> None:
                clients[source].execute_command("MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *keys)

            migrate(key)  # the key moves; the first batch's id stays behind for now
            assert engine.get(key) == "1"  # ASK, then ASKING + the script on the target
            with pytest.raises(EngineUnavailable, match="migration"):
                engine.set(key, "2")
            pipe = clients[target].pipeline(transaction=False)
            pipe.execute_command("ASKING")
            pipe.get(key)
            assert pipe.execute() == [True, "1"]  # nothing applied

            migrate(*clients[source].execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100))
            for port in (target, source, *(p for p in cluster.ports if p not in (target, source))):
                clients[port].execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[target])
            assert engine.set(key, "3")  # MOVED to the new owner
            assert clients[target].get(key) == "3"
            for client in clients.values():
                client.close()
        finally:
            engine.close()
