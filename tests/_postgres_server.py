"""Start a real PostgreSQL server on a free loopback port, in a temporary data directory.

Used by ``tests/conftest.py`` when ``MEMSTACK_TEST_POSTGRES_URL`` is not given (``.ci/run`` gives
it), by ``bench/postgres_faults.py`` when it gets no URL, and runnable by hand::

    python tests/_postgres_server.py [--durable]   # prints the URL and data dir, stops on Ctrl-C

(``--durable``: PostgreSQL's default fsync and synchronous commit, as benchmarks want.)

PostgreSQL refuses to run as root, so under root ``initdb`` and ``pg_ctl`` run as the ``postgres``
user (``runuser -u postgres --``), which owns the data directory. The binaries are looked up on
``PATH``, then in Debian's ``/usr/lib/postgresql/<version>/bin`` (highest version first).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Test servers trade durability for speed: nothing here survives a crash on purpose.
FAST: tuple[str, ...] = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


def bin_dir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``, or None when PostgreSQL is not installed."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
        reverse=True,
    )
    for pg_ctl in versions:
        if (pg_ctl.parent / "initdb").exists():
            return pg_ctl.parent
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def as_owner(args: Sequence[str]) -> list[str]:
    """``args`` run as the ``postgres`` user when we are root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return list(args)
    runuser = shutil.which("runuser")
    if runuser is not None:
        return [runuser, "-u", "postgres", "--", *args]
    return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(f"'{a}'" for a in args)]


class Server:
    """One running server: its URL, data directory and how to stop or restart it."""

    def __init__(
        self, bindir: Path, root: Path, port: int, settings: Sequence[str], password: str | None = None
    ) -> None:
        self.bindir = bindir
        self.pgdata = root / "data"
        self.sockets = root / "sockets"
        self.log = root / "server.log"
        self.port = port
        self.settings = tuple(settings)
        user = "postgres" if password is None else f"postgres:{password}"
        self.url = f"postgresql://{user}@127.0.0.1:{port}/postgres"

    def pg_ctl(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run ``pg_ctl -D PGDATA ARGS`` as the data directory's owner."""
        command = as_owner([str(self.bindir / "pg_ctl"), "-D", str(self.pgdata), *args])
        return subprocess.run(command, check=check, capture_output=True, text=True, timeout=timeout)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = [f"-p {self.port}", "-c listen_addresses=127.0.0.1", f"-k {self.sockets}"]
        options += [f"-c {s}" for s in self.settings]
        result = self.pg_ctl(
            "-w", "-t", "60", "-l", str(self.log), "-o", " ".join(options), "start", check=False
        )
        if result.returncode != 0:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            raise RuntimeError(f"postgres on port {self.port} did not start: {result.stderr}{log[-2000:]}")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: roll back sessions; ``immediate``: no shutdown checkpoint)."""
        self.pg_ctl("-w", "-m", mode, "stop", check=False)


def _chown(path: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(path, "postgres", "postgres")


@contextlib.contextmanager
def postgres_server(
    settings: Sequence[str] = FAST, attempts: int = 4, password: str | None = None
) -> Iterator[Server]:
    """A running server with a trusted ``postgres`` superuser; stopped and deleted on exit. With
    ``password``, TCP connections must give it (SCRAM; the URL carries it), the socket stays trusted.

    Raises:
        RuntimeError: no PostgreSQL binaries, or the server did not start.
    """
    bindir = bin_dir()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    with tempfile.TemporaryDirectory(prefix="memstack-pg-") as tmp:
        root = Path(tmp)
        _chown(root)
        (root / "sockets").mkdir()
        _chown(root / "sockets")
        auth = ["-A", "trust"]
        if password is not None:
            (root / "pw").write_text(password)
            _chown(root / "pw")
            auth = ["--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={root / 'pw'}"]
        initdb = as_owner(
            [str(bindir / "initdb"), "-D", str(root / "data"), "-U", "postgres", *auth,
             "-E", "UTF8", "--locale=C", "--no-sync"]
        )  # fmt: skip
        subprocess.run(initdb, check=True, capture_output=True, timeout=120)
        server: Server | None = None
        try:
            for attempt in range(attempts):
                server = Server(bindir, root, free_port(), [*settings, "max_connections=300"], password)
                try:
                    server.start()
                    break
                except RuntimeError:  # another process took the port first
                    if attempt == attempts - 1:
                        raise
            assert server is not None
            yield server
        finally:
            if server is not None:
                server.stop("immediate")


def with_schema(url: str, schema: str) -> str:
    """``url`` with memstack's ``schema`` parameter set to ``schema``."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "schema"] + [("schema", schema)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def wait_ready(url: str, timeout: float = 30.0) -> None:
    """Wait until the server at ``url`` answers a query."""
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(url, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


if __name__ == "__main__":
    import signal
    import sys

    # Stopped by SIGTERM too (a background job ignores SIGINT): the server goes with it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with postgres_server(settings=() if "--durable" in sys.argv else FAST) as running:
        print(running.url, running.pgdata, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
