"""Rebuilding the SQLite file stalls every tenant: admin keys only, at most once per interval."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.engines import Engine
from memstack.foundation.clock import ManualClock

VACUUM = {"session": "s1", "vacuum": True}


@pytest.fixture
def clients(engine: Engine) -> Iterator[tuple[TestClient, TestClient]]:
    """A tenant key's client and an admin key's client of one keys-mode app."""
    store = ApiKeyStore(engine)
    _, tenant = store.create(["acme"])
    _, admin = store.create(["acme"], admin=True)
    with TestClient(create_app(engine, ServerSettings(require_auth=True))) as a, TestClient(a.app) as b:
        a.headers["Authorization"] = f"Bearer {tenant}"
        b.headers["Authorization"] = f"Bearer {admin}"
        yield a, b


def test_a_tenant_key_may_forget_but_not_vacuum(clients: tuple[TestClient, TestClient]) -> None:
    tenant, _ = clients
    tenant.post("/v1/sessions", json={"session_id": "s1"})
    refused = tenant.post("/v1/forget", json=VACUUM)
    assert refused.status_code == 403 and "admin" in refused.json()["detail"]
    assert tenant.get("/v1/sessions/s1").status_code == 200  # refused before anything was forgotten
    assert tenant.post("/v1/forget", json={"session": "s1"}).status_code == 200


def test_an_admin_vacuums_once_per_interval(
    clients: tuple[TestClient, TestClient], clock: ManualClock
) -> None:
    _, admin = clients
    assert admin.post("/v1/forget", json=VACUUM).status_code == 200
    again = admin.post("/v1/forget", json=VACUUM)
    assert again.status_code == 429 and int(again.headers["Retry-After"]) > 0
    clock.advance(601)
    assert admin.post("/v1/forget", json=VACUUM).status_code == 200
