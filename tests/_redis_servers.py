"""Start real Redis servers on free loopback ports: one standalone, one 3-node cluster.

Used by ``tests/conftest.py`` when ``MEMSTACK_TEST_REDIS_URL`` / ``MEMSTACK_TEST_REDIS_CLUSTER_URL``
are not given (``.ci/run`` gives them), and runnable by hand::

    python tests/_redis_servers.py   # prints the two URLs, stops on Ctrl-C
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def free_port(highest: int = 55535) -> int:
    """A free loopback port no higher than ``highest``: a cluster node also binds port + 10000."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port <= highest:
            return port


def _wait_ping(port: int, timeout: float = 15.0, password: str | None = None) -> None:
    hello = (f"AUTH {password}\r\n" if password else "").encode() + b"PING\r\n"
    expected = b"+OK\r\n+PONG\r\n" if password else b"+PONG\r\n"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2) as conn:
            conn.sendall(hello)
            reply = b""
            while len(reply) < len(expected) and (chunk := conn.recv(64)):
                reply += chunk
            if reply.startswith(expected):
                return
        time.sleep(0.05)
    raise RuntimeError(f"redis on port {port} did not answer within {timeout}s")


def _start(port: int, workdir: Path, *extra: str, password: str | None = None) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (Debian: apt-get install redis-server)")
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    args += ["--dir", str(workdir), "--daemonize", "no", "--loglevel", "warning", *extra]
    if password:
        args += ["--requirepass", password]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_ping(port, password=password)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc


def _start_on_free_port(
    workdir: Path, *extra: str, attempts: int = 4, password: str | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    """Start a server on a fresh free port, retrying when another process took the port first
    (with ``password``, the server requires it: ``--requirepass``)."""
    for attempt in range(attempts):
        port = free_port()
        try:
            return _start(port, workdir, *extra, password=password), port
        except RuntimeError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


@contextlib.contextmanager
def redis_servers() -> Iterator[tuple[str, str]]:
    """Yield ``(standalone_url, cluster_url)``; stop every server on exit."""
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="memstack-redis-") as tmp:
        root = Path(tmp)
        try:
            proc, port = _start_on_free_port(root)
            procs.append(proc)
            cluster_ports = []
            for i in range(3):
                node_dir = root / f"node-{i}"
                node_dir.mkdir()
                proc, p = _start_on_free_port(
                    node_dir, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"
                )
                procs.append(proc)
                cluster_ports.append(p)
            cli = shutil.which("redis-cli") or "redis-cli"
            subprocess.run(
                [
                    cli,
                    "--cluster",
                    "create",
                    *[f"127.0.0.1:{p}" for p in cluster_ports],
                    "--cluster-replicas",
                    "0",
                    "--cluster-yes",
                ],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=60,
            )
            _wait_cluster_ok(cli, cluster_ports)
            yield f"redis://127.0.0.1:{port}/0", f"redis+cluster://127.0.0.1:{cluster_ports[0]}"
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()


def _wait_cluster_ok(cli: str, ports: list[int], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [
            subprocess.run(
                [cli, "-p", str(p), "cluster", "info"], capture_output=True, text=True, timeout=5
            ).stdout
            for p in ports
        ]
        if all("cluster_state:ok" in s for s in states):
            return
        time.sleep(0.1)
    raise RuntimeError("redis cluster did not reach cluster_state:ok")


if __name__ == "__main__":
    with redis_servers() as (standalone, cluster):
        print(standalone)
        print(cluster, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
