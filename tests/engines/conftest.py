"""Fixtures of the PostgreSQL engine's own tests: the test server and a schema per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from ._pg import admin


@pytest.fixture
def server(postgres_url: str | None) -> str:
    """The test server's URL without a schema."""
    if postgres_url is None:
        pytest.skip("no PostgreSQL on this machine")
    parts = urlsplit(postgres_url)
    return parts._replace(query="").geturl()


@pytest.fixture
def schema(server: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A schema of this test alone, dropped afterwards."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    name = f"t_{worker}_{request.node.name}".lower()
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in name)[:60]
    admin(server, f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    yield name
    admin(server, f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
