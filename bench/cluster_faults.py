"""The clustered Redis engine through node failures, a manual failover and a live reshard.

    python bench/cluster_faults.py [--quick | --smoke]

Starts its own 6-node Redis Cluster (3 primaries, 3 replicas, node timeout 2 s) on free loopback
ports, and loads it from two processes, each with one engine on the URL
``redis+cluster://<first node>?wait_replicas=1&wait_ms=500`` (the durability setting). Each
process increments two keys of one slot in one batch (64 slots per process, in turn) and every
fourth call reads them back. Events, one after the other: SIGKILL of a primary that is not the
URL's node, SIGKILL of the URL's node (each restarted once the cluster has failed over, so that
it rejoins as a replica), ``CLUSTER FAILOVER`` on a replica, and a live reshard of slots with
keys in them (``redis-cli --cluster reshard``).

Figures: per event, the cluster's own failover time (until a live node serves the lost slots
again) and the engine's recovery (from the event to its last failed call before the next
event); acknowledged increments lost (a later value at or below an acknowledged one, or a final
value below it); inconsistencies (the two keys of a batch differ); and raw exceptions (anything
the engine raised that is not a memstack error). It takes no ``--url``: it kills the nodes of its
own cluster. ``--smoke``: every event once with short pauses, a 1 s node timeout and a reshard of 20
slots.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis as redis_py

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _redis_cluster import OwnCluster, cluster_ok, own_cluster, wait_until
from _smoke import add_smoke, smoke_tag
from memstack.engines.redis import RedisEngine
from memstack.foundation.errors import EngineUnavailable, MemstackError, NotReplicated

SLOTS_PER_WORKER = 64
NODE_TIMEOUT_MS = 2000


def worker(index: int, url: str, stop: Any, out: Any) -> None:
    """Load from one process until ``stop``; report (index, acked, lost, inconsistent, events)."""
    engine = RedisEngine(url)
    acked = [0] * SLOTS_PER_WORKER
    lost = inconsistent = 0
    events: list[tuple[float, str]] = []
    i = 0
    while not stop.is_set():
        slot = i % SLOTS_PER_WORKER
        tag = f"{{w{index}s{slot}}}"
        try:
            if i % 4 == 3:
                a, b = (int(v or 0) for v in engine.mget([tag + "a", tag + "b"]))
            else:
                batch = engine.batch()
                batch.incr(tag + "a")
                batch.incr(tag + "b")
                a, b = batch.execute().results
            inconsistent += a != b
            lost += a < acked[slot] or (i % 4 != 3 and a == acked[slot])
            acked[slot] = max(acked[slot], a)
            events.append((time.monotonic(), "ok"))
        except NotReplicated:
            events.append((time.monotonic(), "not-replicated"))
        except EngineUnavailable:
            events.append((time.monotonic(), "down"))
        except MemstackError as exc:
            events.append((time.monotonic(), f"error:{type(exc).__name__}"))
        except Exception as exc:  # the figure "raw_exceptions": anything not from memstack's tree
            events.append((time.monotonic(), f"raw:{type(exc).__name__}:{exc}"))
        i += 1
    engine.close()
    out.put((index, acked, lost, inconsistent, events))


def slot_owners(cluster: OwnCluster) -> dict[int, int]:
    """Slot -> port of its primary, as a live node sees it."""
    for port in cluster.procs:
        try:
            with cluster.client(port) as client:
                owners: dict[int, int] = {}
                for start, end, primary, *_ in client.execute_command("CLUSTER", "SLOTS"):
                    owners.update(dict.fromkeys(range(start, end + 1), int(primary[1])))
                return owners
        except redis_py.RedisError:
            continue
    return {}


def kill_and_rejoin(cluster: OwnCluster, port: int) -> float:
    """SIGKILL ``port`` (a primary); the seconds until the cluster serves its slots again. Then
    restart it and wait until it has synced as a replica."""
    lost_slots = [s for s, p in slot_owners(cluster).items() if p == port]
    started = time.monotonic()
    cluster.kill(port)

    def healed() -> bool:
        owners = slot_owners(cluster)
        live = list(cluster.procs)
        return all(owners.get(s, port) != port for s in lost_slots) and cluster_ok(live)

    if not wait_until(healed, timeout=60):
        raise RuntimeError(f"the cluster did not fail over from {port}")
    failover = time.monotonic() - started
    time.sleep(1.0)
    cluster.start(port)
    wait_until(lambda: cluster_ok(cluster.ports), timeout=60)
    wait_until(cluster._replicas_synced, timeout=60)
    return failover


def manual_failover(cluster: OwnCluster) -> float:
    for port in cluster.ports:
        with cluster.client(port) as client:
            if client.info("replication")["role"] == "slave":
                started = time.monotonic()
                client.execute_command("CLUSTER", "FAILOVER")
                wait_until(lambda c=client: c.info("replication")["role"] == "master", timeout=30)
                return time.monotonic() - started
    raise RuntimeError("no replica to fail over to")


def reshard(cluster: OwnCluster, slots: int) -> float:
    owners = slot_owners(cluster)
    primaries = sorted(set(owners.values()))
    ids = {}
    for port in primaries[:2]:
        with cluster.client(port) as client:
            ids[port] = client.execute_command("CLUSTER", "MYID")
    source, target = primaries[0], primaries[1]
    started = time.monotonic()
    subprocess.run(
        [
            "redis-cli", "--cluster", "reshard", f"127.0.0.1:{target}",
            "--cluster-from", ids[source], "--cluster-to", ids[target],
            "--cluster-slots", str(slots), "--cluster-yes",
        ],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return time.monotonic() - started


def recovery(events: list[tuple[float, str]], start: float, end: float) -> float:
    """Seconds from ``start`` to the last failed call before ``end`` (0: none failed)."""
    downs = [t for t, kind in events if start <= t < end and kind == "down"]
    return max(downs) - start if downs else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter phases (about a minute)")
    add_smoke(parser)
    args = parser.parse_args()
    pause = 0.3 if args.smoke else 1.0 if args.quick else 3.0
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="memstack-cluster-faults-") as tmp:
        extra = ("--cluster-node-timeout", str(1000 if args.smoke else NODE_TIMEOUT_MS))
        with own_cluster(Path(tmp), masters=3, replicas=1, extra=extra) as cluster:
            url_port = cluster.ports[0]
            url = f"redis+cluster://127.0.0.1:{url_port}?wait_replicas=1&wait_ms=500"
            stop, out = ctx.Event(), ctx.Queue()
            workers = [ctx.Process(target=worker, args=(w, url, stop, out)) for w in (0, 1)]
            for proc in workers:
                proc.start()
            time.sleep(2 * pause + 1.0)  # the workers import and connect
            marks: dict[str, float] = {}
            other = next(p for p in sorted(set(slot_owners(cluster).values())) if p != url_port)
            marks["failover"] = time.monotonic()
            failover_s = kill_and_rejoin(cluster, other)
            time.sleep(pause)
            marks["url_node"] = time.monotonic()
            url_failover_s = kill_and_rejoin(cluster, url_port)
            time.sleep(pause)
            marks["manual"] = time.monotonic()
            manual_s = manual_failover(cluster)
            time.sleep(pause)
            marks["reshard"] = time.monotonic()
            reshard_s = reshard(cluster, 20 if args.smoke else 200 if args.quick else 1000)
            time.sleep(pause)
            marks["end"] = time.monotonic()
            stop.set()
            results = [out.get(timeout=120) for _ in workers]
            for proc in workers:
                proc.join(timeout=30)
            check = RedisEngine(f"redis+cluster://127.0.0.1:{cluster.ports[1]}")
            acked_lost = inconsistencies = raw = 0
            events: list[tuple[float, str]] = []
            for index, acked, lost, inconsistent, worker_events in results:
                acked_lost += lost
                inconsistencies += inconsistent
                events += worker_events
                for slot in range(SLOTS_PER_WORKER):
                    tag = f"{{w{index}s{slot}}}"
                    a, b = (int(v or 0) for v in check.mget([tag + "a", tag + "b"]))
                    inconsistencies += a != b
                    acked_lost += a < acked[slot]
            check.close()
    names = list(marks)
    rec = {n: recovery(events, marks[n], marks[names[i + 1]]) for i, n in enumerate(names[:-1])}
    kinds: dict[str, int] = {}
    for _, kind in events:
        kinds[kind.split(":", 2)[0] if kind.startswith("raw:") else kind] = kinds.get(kind, 0) + 1
        if kind.startswith("raw:"):
            raw += 1
            if raw <= 5:
                print("  raw exception:", kind)
    print(f"calls: {len(events)} by outcome {kinds}")
    print(f"primary killed:    failed over in {failover_s:.2f} s, engine back in {rec['failover']:.2f} s")
    print(f"URL's node killed: failed over in {url_failover_s:.2f} s, engine back in {rec['url_node']:.2f} s")
    print(f"manual failover:   {manual_s:.2f} s, engine failures for {rec['manual']:.2f} s")
    print(f"live reshard:      {reshard_s:.2f} s, engine failures for {rec['reshard']:.2f} s")
    print(f"acknowledged increments lost: {acked_lost}, inconsistencies: {inconsistencies}, raw: {raw}")
    figures = {
        "recovery_after_failover_s": f"{rec['failover']:.2f}",
        "url_node_loss_recovery_s": f"{rec['url_node']:.2f}",
        "acked_lost": acked_lost,
        "inconsistencies": inconsistencies,
        "raw_exceptions": raw,
        "cluster_failover_s": f"{failover_s:.2f}",
        "cluster_url_node_failover_s": f"{url_failover_s:.2f}",
        "manual_failover_failures_s": f"{rec['manual']:.2f}",
        "reshard_failures_s": f"{rec['reshard']:.2f}",
    }
    print("RESULT " + " ".join(f"{k}={v}" for k, v in figures.items()) + smoke_tag(args))


if __name__ == "__main__":
    main()
