"""Service fixtures: an app on each engine, and clients with API keys for two tenants."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.engines import Engine


@pytest.fixture
def client(engine: Engine) -> Iterator[TestClient]:
    """A client of an app without API keys (loopback mode: tenant ``default``)."""
    with TestClient(create_app(engine)) as test_client:
        yield test_client


@pytest.fixture
def tenant_clients(engine: Engine) -> Iterator[tuple[TestClient, TestClient]]:
    """Clients of one app for tenant ``acme`` and tenant ``beta`` (each with its own key)."""
    store = ApiKeyStore(engine)
    _, token_a = store.create(["acme"])
    _, token_b = store.create(["beta"])
    # Two apps on one engine: isolation must hold in the storage layer, not in one app's caches.
    settings = ServerSettings(require_auth=True)
    with TestClient(create_app(engine, settings)) as a, TestClient(create_app(engine, settings)) as b:
        a.headers["Authorization"] = f"Bearer {token_a}"
        b.headers["Authorization"] = f"Bearer {token_b}"
        yield a, b
