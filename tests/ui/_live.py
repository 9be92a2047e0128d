"""A real server for browser tests and the benchmark: an app with one API key, on a loopback port."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from memstack.engines import Engine
from memstack.server import ServerSettings, create_app
from memstack.server.keys import ApiKeyStore


@dataclass
class Live:
    """A running server: its URL, the tenant's key and an API client signed in with it."""

    url: str
    token: str
    tenant: str
    api: httpx.Client


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """Run ``app`` under uvicorn on a free loopback port in a thread; yield its base URL."""
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@contextlib.contextmanager
def live_server(engine: Engine, tenant: str = "acme") -> Iterator[Live]:
    """An app on ``engine`` that requires a key; yields the key of ``tenant`` and a client."""
    _, token = ApiKeyStore(engine).create([tenant])
    app = create_app(engine, ServerSettings(require_auth=True), mcp=False)
    with (
        serving(app) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as api,
    ):
        yield Live(url=url, token=token, tenant=tenant, api=api)
