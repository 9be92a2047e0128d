"""A real server for browser tests and the benchmark: an app with one API key, on a loopback port."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import httpx

from _serving import serving
from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.engines import Engine
from memstack.search.embedders import Embedder


@dataclass
class Live:
    """A running server: its URL, the tenant's key and an API client signed in with it."""

    url: str
    token: str
    tenant: str
    api: httpx.Client


@contextlib.contextmanager
def live_server(engine: Engine, tenant: str = "acme", embedder: Embedder | None = None) -> Iterator[Live]:
    """An app on ``engine`` that requires a key; yields the key of ``tenant`` and a client."""
    _, token = ApiKeyStore(engine).create([tenant])
    app = create_app(engine, ServerSettings(require_auth=True, embedder=embedder), mcp=False)
    with (
        serving(app) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as api,
    ):
        yield Live(url=url, token=token, tenant=tenant, api=api)
