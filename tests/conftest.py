"""Fixtures shared by every test: the five engines, a manual clock, a ``Memory`` per engine.

Every test that takes ``engine`` or ``mem`` runs on memory, a SQLite file, standalone Redis, a
3-node Redis Cluster and PostgreSQL. Redis URLs come from ``MEMSTACK_TEST_REDIS_URL`` and
``MEMSTACK_TEST_REDIS_CLUSTER_URL`` (``.ci/run`` sets them); without them the suite starts its own
servers with ``redis-server`` (skipping the Redis engines only when no ``redis-server`` exists and
``CI`` is not set). Under pytest-xdist only worker ``gw0`` uses the given servers; each other worker
starts its own. PostgreSQL comes from ``MEMSTACK_TEST_POSTGRES_URL`` (``.ci/run`` sets it), where
each worker gets a schema of its own (``test_gw0``…); without it each worker starts its own server
(``tests/_postgres_server.py``), skipping PostgreSQL only when no PostgreSQL binaries exist and
``CI`` is not set.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from memstack import ManualClock, Memory
from memstack.engines import Engine, open_engine

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.register_profile(
    "ci", deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile("ci" if os.environ.get("CI") else "default")

pytest_plugins = ["keyspace_guard"]  # every key memstack writes belongs to a keyspace family

ENGINES = ["memory", "sqlite", "redis", "redis-cluster", "postgres"]

# memstack.open, the CLI and the server resolve the embedder from $MEMSTACK_EMBEDDER, else the local
# model (installed by the dev set-up). The suite searches with BM25 alone unless a test asks for
# vectors (an explicit embedder, or its own environment for the processes it starts), so that no
# test loads a model it does not need; subprocesses inherit this.
os.environ["MEMSTACK_EMBEDDER"] = "none"


@pytest.fixture(scope="session")
def redis_urls() -> Iterator[tuple[str, str] | None]:
    """``(standalone, cluster)`` URLs of live Redis servers, or None when none can be had."""
    standalone = os.environ.get("MEMSTACK_TEST_REDIS_URL")
    cluster = os.environ.get("MEMSTACK_TEST_REDIS_CLUSTER_URL")
    # Redis tests flush the servers they use, so two pytest-xdist workers must never share one:
    # the given servers go to the first worker (or to a run without workers), every other worker
    # starts its own pair below.
    if standalone and cluster and os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":
        yield standalone, cluster
        return
    if shutil.which("redis-server") is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI needs redis-server or MEMSTACK_TEST_REDIS_URL/_CLUSTER_URL")
        yield None
        return
    from _redis_servers import redis_servers

    with redis_servers() as urls:
        yield urls


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str | None]:
    """The URL of a live PostgreSQL server and this worker's schema, or None when none can be had."""
    from _postgres_server import bin_dir, postgres_server, with_schema

    if importlib.util.find_spec("psycopg") is None:  # the `postgres` extra (setup.sh --dev has it)
        if os.environ.get("CI"):
            raise RuntimeError("CI needs psycopg: pip install '.[postgres]'")
        yield None
        return
    schema = f"test_{os.environ.get('PYTEST_XDIST_WORKER', 'gw0')}"
    given = os.environ.get("MEMSTACK_TEST_POSTGRES_URL")
    if given:
        yield with_schema(given, schema)
        return
    if bin_dir() is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI needs PostgreSQL (initdb, pg_ctl) or MEMSTACK_TEST_POSTGRES_URL")
        yield None
        return
    with postgres_server() as server:
        yield with_schema(server.url, schema)


@pytest.fixture
def clock() -> ManualClock:
    """A manual clock starting at the current wall-clock time."""
    return ManualClock()


def engine_url(
    kind: str, tmp_path: Path, redis_urls: tuple[str, str] | None, postgres_url: str | None = None
) -> str:
    """The URL of a fresh engine of ``kind``."""
    if kind == "memory":
        return "memory://"
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'memstack.db'}"
    if kind == "postgres":
        if postgres_url is None:
            pytest.skip("no PostgreSQL on this machine")
        return postgres_url
    if redis_urls is None:
        pytest.skip("no redis-server on this machine")
    return redis_urls[0] if kind == "redis" else redis_urls[1]


@contextlib.contextmanager
def fresh_engine(kind: str, url: str, clock: ManualClock) -> Iterator[Engine]:
    engine = open_engine(url, clock=clock)
    try:
        if kind.startswith("redis") or kind == "postgres":
            engine.flush()
        yield engine
    finally:
        engine.close()


@pytest.fixture(params=ENGINES)
def engine_kind(request: pytest.FixtureRequest) -> str:
    """The engine name of this parametrisation."""
    return str(request.param)


@pytest.fixture
def engine_url_for(engine_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """URL of the engine under test (a second ``open_engine`` on it sees the same data).

    Servers are only started (once per run) when an engine of theirs is asked for.
    """
    urls = request.getfixturevalue("redis_urls") if engine_kind.startswith("redis") else None
    postgres = request.getfixturevalue("postgres_url") if engine_kind == "postgres" else None
    return engine_url(engine_kind, tmp_path, urls, postgres)


@pytest.fixture
def engine(engine_kind: str, engine_url_for: str, clock: ManualClock) -> Iterator[Engine]:
    """A fresh engine of each kind, on the manual clock."""
    with fresh_engine(engine_kind, engine_url_for, clock) as eng:
        yield eng


@pytest.fixture
def mem(engine: Engine) -> Iterator[Memory]:
    """A :class:`memstack.Memory` on each engine (closes the engine at the end)."""
    memory = Memory(engine)
    yield memory
    memory.close()
