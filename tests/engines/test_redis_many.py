"""Independent batches on a Redis Cluster go as one pipeline per node, and a batch of the pipeline
that meets a moved slot follows it as it would alone."""

from __future__ import annotations

from pathlib import Path

from redis.crc import key_slot

from _redis_cluster import OwnCluster, own_cluster
from memstack import ManualClock
from memstack.engines.bulk import delete_keys
from memstack.engines.redis import RedisEngine


def _reads(cluster: OwnCluster) -> int:
    """The socket reads every node has served (a pipeline is read whole, a batch alone is one)."""
    total = 0
    for port in cluster.ports:
        with cluster.client(port) as client:
            total += int(client.info("stats")["total_reads_processed"])
    return total


def test_deleting_keys_of_many_slots_takes_a_round_trip_per_node_not_per_key(
    tmp_path: Path, clock: ManualClock
) -> None:
    with own_cluster(tmp_path) as cluster:
        engine = RedisEngine(f"redis+cluster://127.0.0.1:{cluster.ports[0]}", clock)
        try:
            keys = [f"k{i}" for i in range(300)]  # no hash tag: keys of some 300 slots
            for key in keys:
                engine.set(key, "v")
            before = _reads(cluster)
            assert delete_keys(engine, [*keys, "never-written"]) == len(keys)
            pipelined = _reads(cluster) - before
            assert list(engine.scan("k")) == []
            for key in keys:
                engine.set(key, "v")
            before = _reads(cluster)
            assert sum(engine.delete(key) for key in keys) == len(keys)  # one call each, to compare
            alone = _reads(cluster) - before
            assert alone >= len(keys)
            assert pipelined < len(keys) // 5
        finally:
            engine.close()


def test_a_pipelined_batch_follows_a_moved_slot(tmp_path: Path, clock: ManualClock) -> None:
    with own_cluster(tmp_path) as cluster:
        engine = RedisEngine(f"redis+cluster://127.0.0.1:{cluster.ports[0]}", clock)
        try:
            moving, staying = engine.tag("moving") + "k", engine.tag("staying") + "k"
            slot = key_slot(moving.encode())
            assert engine.get(moving) is None  # a read only: the slot stays empty, so it moves as is
            _, target = cluster.move_empty_slot(slot)
            batch, other = engine.batch(), engine.batch()
            batch.set(moving, "1")
            other.set(staying, "2")
            results = engine.execute_many([other.ops, batch.ops, other.ops])
            assert [r.results for r in results] == [[True], [True], [True]]
            with cluster.client(target) as client:
                assert client.get(moving) == "1"  # the old owner answered MOVED; the batch followed
            assert engine.get(moving) == "1" and engine.get(staying) == "2"
        finally:
            engine.close()
