"""A real ``memstack serve`` process on a free loopback port, for the live-server suites."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from _redis_servers import _start, _start_on_free_port, free_port


@dataclass
class Served:
    """A running server: its base URL, and its standard error as read so far."""

    base: str
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)


def _drain(served: Served) -> None:
    assert served.proc.stderr is not None
    for line in served.proc.stderr:
        served.lines.append(line)


@contextlib.contextmanager
def memstack_serve(url: str, *args: str, timeout: float = 30.0) -> Iterator[Served]:
    """Run ``memstack --url URL serve --port P ARGS`` until the block ends (then terminate it)."""
    port = free_port()
    command = [sys.executable, "-m", "memstack.doors.cli", "--url", url, "serve", "--port", str(port), *args]
    proc = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ}
    )
    served = Served(f"http://127.0.0.1:{port}", proc)
    reader = threading.Thread(target=_drain, args=(served,), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"memstack serve exited with {proc.returncode}: {served.stderr}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{served.base}/healthz", timeout=1).status_code in (200, 503):
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"memstack serve did not answer within {timeout}s: {served.stderr}")
            time.sleep(0.1)
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()


@dataclass
class OwnRedis:
    """A standalone Redis (no persistence) of one test alone."""

    port: int
    workdir: Path
    proc: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def start(self) -> None:
        """Start again on the same port: without persistence every key is gone."""
        self.proc = _start(self.port, self.workdir)


@contextlib.contextmanager
def own_redis() -> Iterator[OwnRedis]:
    """A Redis server of this test alone (never one another test or helper uses)."""
    with tempfile.TemporaryDirectory(prefix="memstack-live-") as tmp:
        proc, port = _start_on_free_port(Path(tmp))
        server = OwnRedis(port, Path(tmp), proc)
        try:
            yield server
        finally:
            if server.proc.poll() is None:
                server.stop()
