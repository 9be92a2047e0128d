"""CLI fixtures: a URL two processes can share on each durable engine, and the CLI in a process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memstack.engines import open_engine

Cli = Callable[..., subprocess.CompletedProcess[bytes]]

# memory:// lives inside one process: the CLI cannot share it with anything else.
SHARED_ENGINES = ["sqlite", "redis", "redis-cluster", "postgres"]


@pytest.fixture(params=SHARED_ENGINES)
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a fresh engine that the CLI and an app (or a second CLI) both open."""
    kind = str(request.param)
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared.db'}"
        return
    if kind == "postgres":
        url: str | None = request.getfixturevalue("postgres_url")
        if url is None:
            pytest.skip("no PostgreSQL on this machine")
    else:
        urls = request.getfixturevalue("redis_urls")
        if urls is None:
            pytest.skip("no redis-server on this machine")
        url = urls[0] if kind == "redis" else urls[1]
    with open_engine(url) as engine:
        engine.flush()
    yield url


def _run(*args: str | bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "memstack.doors.cli", *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


@pytest.fixture
def cli() -> Cli:
    """``cli(*args, env=...)``: ``python -m memstack.doors.cli ARGS`` in a real process (PYTHONPATH
    inherited), returning the completed process with stdout and stderr as bytes."""
    return _run
