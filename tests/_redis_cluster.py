"""A Redis Cluster of one test or benchmark: its nodes to kill, stop and start again.

Used by the Redis engine tests that break a cluster, and by ``bench/cluster_faults.py``.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import redis as redis_py

from _redis_servers import _start, free_port

CLUSTER_ARGS = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")


def cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is valid and free."""
    while True:
        port = free_port()
        if port <= 55535:
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port


def cluster_ok(ports: list[int]) -> bool:
    """Every node in ``ports`` answers and says ``cluster_state:ok``."""
    for port in ports:
        try:
            with redis_py.Redis(port=port, decode_responses=True, socket_timeout=2) as client:
                if "cluster_state:ok" not in str(client.execute_command("CLUSTER", "INFO")):
                    return False
        except redis_py.RedisError:
            return False
    return True


def wait_until(predicate: Callable[[], object], timeout: float) -> bool:
    """Poll ``predicate`` every 20 ms until true or ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


class OwnCluster:
    """Nodes of one cluster: ``ports`` in creation order (the first ``masters`` are primaries).

    Args:
        root: a directory for the nodes' files.
        masters, replicas: primaries, and replicas per primary.
        extra: more ``redis-server`` arguments for every node (e.g. a short node timeout).
    """

    def __init__(self, root: Path, masters: int = 3, replicas: int = 0, extra: tuple[str, ...] = ()) -> None:
        self.dir = root
        self.masters = masters
        self.replicas = replicas
        self.extra = extra
        self.ports = [cluster_port() for _ in range(masters * (1 + replicas))]
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        for port in self.ports:
            (root / str(port)).mkdir()
        self.start()

    def start(self, *ports: int) -> None:
        """Start ``ports`` (default: every node), again with their saved cluster configuration."""
        for port in ports or self.ports:
            self.procs[port] = _start(port, self.dir / str(port), *CLUSTER_ARGS, *self.extra)

    def create(self) -> None:
        """Join the nodes into one cluster and wait until every node says it is ok."""
        subprocess.run(
            [
                "redis-cli",
                "--cluster",
                "create",
                *[f"127.0.0.1:{p}" for p in self.ports],
                "--cluster-replicas",
                str(self.replicas),
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        if not wait_until(lambda: cluster_ok(self.ports), timeout=60):
            raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")
        if self.replicas and not wait_until(self._replicas_synced, timeout=60):
            raise RuntimeError("the replicas did not finish their first sync")

    def _replicas_synced(self) -> bool:
        for port in self.ports:
            with redis_py.Redis(port=port, decode_responses=True) as client:
                info = client.info("replication")
                if info["role"] == "slave" and info.get("master_link_status") != "up":
                    return False
        return True

    def kill(self, port: int, sig: int = signal.SIGKILL) -> None:
        """Stop one node (SIGKILL by default: no goodbye to the cluster)."""
        proc = self.procs.pop(port)
        proc.send_signal(sig)
        proc.wait(timeout=10)

    def stop(self) -> None:
        """Stop every running node."""
        for port in list(self.procs):
            self.kill(port, signal.SIGTERM)

    def client(self, port: int) -> redis_py.Redis:
        """A plain client on one node."""
        return redis_py.Redis(port=port, decode_responses=True)

    def primary_of(self, key: str) -> int:
        """The port of the primary serving ``key``, as a live node sees it."""
        from redis.crc import key_slot

        slot = key_slot(key.encode())
        for port in self.procs:
            with contextlib.suppress(redis_py.RedisError), self.client(port) as client:
                for start, end, primary, *_ in client.execute_command("CLUSTER", "SLOTS"):
                    if start <= slot <= end:
                        return int(primary[1])
        raise RuntimeError(f"no live node knows slot {slot}")

    def move_empty_slot(self, slot: int) -> tuple[int, int]:
        """Give an empty ``slot`` to another primary (no keys to migrate): its ``(old, new)`` owner
        ports, once every node says the cluster is ok."""
        clients = {port: self.client(port) for port in self.ports}
        try:
            ids = {port: client.execute_command("CLUSTER", "MYID") for port, client in clients.items()}
            owner = next(p for p, c in clients.items() if slot in _owned_slots(c, ids[p]))
            target = next(p for p in self.ports if p != owner)
            for port in [target, owner, *(p for p in self.ports if p not in (target, owner))]:
                clients[port].execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[target])
        finally:
            for client in clients.values():
                client.close()
        if not wait_until(lambda: cluster_ok(self.ports), timeout=30):
            raise RuntimeError(f"the cluster did not settle after slot {slot} moved")
        return owner, target


def _owned_slots(client: redis_py.Redis, node_id: str) -> set[int]:
    owned: set[int] = set()
    for start, end, master, *_ in client.execute_command("CLUSTER", "SLOTS"):
        if master[2] == node_id:
            owned.update(range(start, end + 1))
    return owned


@contextlib.contextmanager
def own_cluster(
    root: Path, masters: int = 3, replicas: int = 0, extra: tuple[str, ...] = ()
) -> Iterator[OwnCluster]:
    """A created cluster, stopped on exit."""
    cluster = OwnCluster(root, masters, replicas, extra)
    try:
        cluster.create()
        yield cluster
    finally:
        cluster.stop()
