"""Service fixtures: an app on each engine, and clients with API keys for two tenants."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402 - after importorskip

from memstack.engines import Engine  # noqa: E402
from memstack.server import ServerSettings, create_app  # noqa: E402
from memstack.server.keys import ApiKeyStore  # noqa: E402


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
    app = create_app(engine, ServerSettings(require_auth=True))
    with TestClient(app) as a, TestClient(app) as b:
        a.headers["Authorization"] = f"Bearer {token_a}"
        b.headers["Authorization"] = f"Bearer {token_b}"
        yield a, b
