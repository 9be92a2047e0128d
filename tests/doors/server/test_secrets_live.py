"""The engine password never leaves the process: a real ``memstack serve`` on a password-protected
Redis, and on a PostgreSQL server that asks for its password (SCRAM), the engine stopped, and every
output searched for the password.

Outputs searched: the server's standard output and error (banner and every log line, at debug
level), the body and headers of every route of the OpenAPI document and every page and stream of
the server, with and without a key, ``/metrics``, and the CLI (``doctor``, ``keys``, tier
commands, ``export``, ``serve``) on the same URL, with the engine up and down.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

from _redis_servers import _start_on_free_port

from .live import memstack_serve


class Guarded:
    """A password-protected engine server of this test's own: its URL, the password, and how to
    stop it while memstack runs."""

    def __init__(self, name: str, url: str, password: str, shown: str, stop: Callable[[], None]) -> None:
        self.name, self.url, self.password, self.shown, self.stop = name, url, password, shown, stop


@pytest.fixture
def guarded_redis() -> Iterator[Guarded]:
    """A Redis that requires a password."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    password = "pw" + secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="memstack-secret-") as tmp:
        proc, port = _start_on_free_port(Path(tmp), password=password)

        def stop() -> None:
            proc.terminate()
            proc.wait(timeout=10)

        try:
            yield Guarded(
                "redis", f"redis://:{password}@127.0.0.1:{port}/0", password, "redis://:***@127.0.0.1", stop
            )
        finally:
            if proc.poll() is None:
                stop()


@pytest.fixture
def guarded_postgres() -> Iterator[Guarded]:
    """A PostgreSQL server whose TCP connections must give the password (SCRAM)."""
    pytest.importorskip("psycopg")
    from _postgres_server import bin_dir, postgres_server

    if bin_dir() is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI needs PostgreSQL's binaries (apt-get install postgresql)")
        pytest.skip("PostgreSQL is not installed")
    password = "pw" + secrets.token_hex(16)
    with postgres_server(password=password) as server:
        shown = "postgresql://postgres:***@127.0.0.1"
        yield Guarded("postgres", server.url, password, shown, lambda: server.stop("immediate"))


class _Outputs:
    """Everything the processes said, labelled, to search for the password at the end."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, label: str, text: str) -> str:
        self.items.append((label, text))
        return text

    def cli(
        self, url: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "memstack.doors.cli", "--url", url, *args],
            capture_output=True,
            text=True,
            timeout=90,
            env={**os.environ, **(env or {})},
        )
        self.add(f"cli {' '.join(args)} stdout", done.stdout)
        self.add(f"cli {' '.join(args)} stderr", done.stderr)
        return done

    def response(self, label: str, response: httpx.Response) -> httpx.Response:
        self.add(f"{label} headers", "\n".join(f"{k}: {v}" for k, v in response.headers.items()))
        self.add(f"{label} body", response.text)
        return response


def _content(operation: dict[str, Any]) -> dict[str, Any]:
    content: dict[str, Any] = operation.get("responses", {}).get("200", {}).get("content", {})
    return content


def _every_request(spec: dict[str, Any], sample: bool) -> list[tuple[str, str]]:
    """Every operation of the OpenAPI document (with ``sample``: the first of each path prefix)
    and every page; ``/v1/sessions`` always."""
    calls, prefixes = [], set()
    for path, operations in spec["paths"].items():
        prefix = "/".join(path.split("/")[:3])
        if sample and prefix in prefixes and path != "/v1/sessions":
            continue
        prefixes.add(prefix)
        filled = re.sub(r"\{[^}]+\}", "x1", path)
        # A stream (a board's events) runs until closed: _hit_everything reads its first chunk.
        plain = [m for m, op in operations.items() if "text/event-stream" not in _content(op)]
        calls += [(method.upper(), filled) for method in plain][: 1 if sample else None]
    pages = ["/healthz", "/readyz", "/metrics", "/docs", "/redoc", "/docs/oauth2-redirect", "/openapi.json"]
    calls += [("GET", p) for p in [*pages, "/ui", "/ui/", "/ui/static/app.js", "/ui/api/whoami", "/nowhere"]]
    return calls


def _hit_everything(
    base: str, token: str, outputs: _Outputs, phase: str, *, sample: bool = False
) -> dict[str, httpx.Response]:
    spec = httpx.get(f"{base}/openapi.json", timeout=10).json()
    seen: dict[str, httpx.Response] = {}
    body = {"value": 1, "session_id": "s1", "content": "c", "role": "user", "tenants": ["acme"], "query": "q"}
    for who, headers in (("anonymous", {}), ("keyed", {"Authorization": f"Bearer {token}"})):
        with httpx.Client(base_url=base, headers=headers, timeout=30) as client:

            def call(method: str, path: str, client: httpx.Client = client) -> httpx.Response:
                json_body = body if method in ("POST", "PUT", "PATCH") else None
                return client.request(method, path, json=json_body, params={"scope": "u1"})

            requests = _every_request(spec, sample)
            # At once: a request to a stopped PostgreSQL waits out the engine's connect timeout.
            with ThreadPoolExecutor(max_workers=16) as workers:
                answers = list(workers.map(lambda r: call(*r), requests))
            for (method, path), response in zip(requests, answers, strict=True):
                seen[f"{who} {method} {path}"] = outputs.response(f"{phase} {who} {method} {path}", response)
            mcp = client.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Accept": "application/json, text/event-stream"},
            )
            outputs.response(f"{phase} {who} POST /mcp", mcp)
            for events in ("/ui/api/shared/board/events", "/v1/shared/board/events"):
                with client.stream("GET", events, timeout=10) as stream:
                    first = next(stream.iter_bytes(), b"")  # a live stream runs until closed: its snapshot
                    outputs.add(
                        f"{phase} {who} {events}", f"{stream.status_code} {dict(stream.headers)} {first!r}"
                    )
    return seen


def test_the_redis_password_never_leaves_the_process(guarded_redis: Guarded) -> None:
    _never_leaves(guarded_redis)


def test_the_postgres_password_never_leaves_the_process(guarded_postgres: Guarded) -> None:
    _never_leaves(guarded_postgres)


def _never_leaves(guarded: Guarded) -> None:
    url, password, name, shown = guarded.url, guarded.password, guarded.name, guarded.shown
    outputs = _Outputs()

    created = outputs.cli(url, "--json", "keys", "create", "--tenant", "acme", "--admin")
    assert created.returncode == 0, created.stderr
    token = created.stdout.split('"token": "')[1].split('"')[0]
    assert outputs.cli(url, "sessions", "create", "s1").returncode == 0
    up = outputs.cli(url, "doctor")
    assert up.returncode == 0 and f"{name} reachable at {shown}" in up.stdout, up.stdout

    with memstack_serve(url, "--auth", "keys", "--log-level", "debug") as served:
        up_responses = _hit_everything(served.base, token, outputs, "up")
        assert up_responses["keyed GET /v1/info"].status_code == 200
        assert up_responses["keyed GET /readyz"].status_code == 200

        guarded.stop()  # the engine goes away while the server runs
        # A stopped PostgreSQL answers each request after the engine's connect timeout (5 s): one
        # operation per path prefix then, not every one.
        down = _hit_everything(served.base, token, outputs, "down", sample=name == "postgres")
        ready = down["anonymous GET /readyz"]
        assert ready.status_code == 503
        assert ready.json()["detail"].startswith(f"engine '{name}' is not ready: it cannot be reached")
        assert down["keyed GET /v1/sessions"].status_code == 503
        assert down["anonymous GET /v1/sessions"].status_code in (401, 503)

        # The CLI on the same URL, the engine down: one error line each, exit 4, no password (the
        # commands run at once: each waits out the engine's connect timeout).
        failing = [("doctor",), ("keys", "list"), ("sessions", "list"), ("export", "-")]
        others = [("keys", "create", "--tenant", "acme"), ("--json", "keys", "create", "--tenant", "acme")]
        serve_again = ("serve", "--port", "1")  # a second server cannot even start
        with ThreadPoolExecutor(max_workers=8) as workers:
            done = dict(zip(
                [*failing, *others, serve_again],
                workers.map(lambda args: outputs.cli(url, *args), [*failing, *others, serve_again]),
                strict=True,
            ))  # fmt: skip
        for args in failing:
            assert done[args].returncode == 4, (args, done[args].stderr)
            assert shown in done[args].stderr or "127.0.0.1" in done[args].stderr
        refused = done[serve_again]
        assert refused.returncode in (1, 2, 4) and "Traceback" not in refused.stderr
    outputs.add("serve stderr", served.stderr)
    assert f"memstack serving {name} ({shown}:" in served.stderr
    assert f"engine '{name}' is not ready" in served.stderr  # the operator's log says why, redacted

    searched = sum(len(text) for _, text in outputs.items)
    hits = [label for label, text in outputs.items if password in text or password.upper() in text.upper()]
    assert hits == [], hits
    assert searched > 100_000  # the search covered real output, not empty strings
