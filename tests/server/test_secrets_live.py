"""The Redis password never leaves the process: a real ``memstack serve`` on a password-protected
Redis, Redis stopped, and every output searched for the password.

Outputs searched: the server's standard output and error (banner and every log line, at debug
level), the body and headers of every route of the OpenAPI document and every page and stream of
the server, with and without a key, ``/metrics``, and the CLI (``doctor``, ``keys``, tier
commands, ``export``, ``serve``) on the same URL, with Redis up and down.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

from _redis_servers import _start_on_free_port

from .live import memstack_serve


@pytest.fixture
def guarded_redis() -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    """``(url, password, process)`` of a Redis that requires a password (this test's alone)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    password = "pw" + secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="memstack-secret-") as tmp:
        proc, port = _start_on_free_port(Path(tmp), password=password)
        try:
            yield f"redis://:{password}@127.0.0.1:{port}/0", password, proc
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)


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
            [sys.executable, "-m", "memstack.cli", "--url", url, *args],
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


def _every_request(spec: dict[str, Any]) -> list[tuple[str, str]]:
    calls = []
    for path, operations in spec["paths"].items():
        filled = re.sub(r"\{[^}]+\}", "x1", path)
        calls += [(method.upper(), filled) for method in operations]
    pages = ["/healthz", "/readyz", "/metrics", "/docs", "/redoc", "/docs/oauth2-redirect", "/openapi.json"]
    calls += [("GET", p) for p in [*pages, "/ui", "/ui/", "/ui/static/app.js", "/ui/api/whoami", "/nowhere"]]
    return calls


def _hit_everything(base: str, token: str, outputs: _Outputs, phase: str) -> dict[str, httpx.Response]:
    spec = httpx.get(f"{base}/openapi.json", timeout=10).json()
    seen: dict[str, httpx.Response] = {}
    body = {"value": 1, "session_id": "s1", "content": "c", "role": "user", "tenants": ["acme"], "query": "q"}
    for who, headers in (("anonymous", {}), ("keyed", {"Authorization": f"Bearer {token}"})):
        with httpx.Client(base_url=base, headers=headers, timeout=20) as client:
            for method, path in _every_request(spec):
                json_body = body if method in ("POST", "PUT", "PATCH") else None
                response = client.request(method, path, json=json_body, params={"scope": "u1"})
                seen[f"{who} {method} {path}"] = outputs.response(f"{phase} {who} {method} {path}", response)
            mcp = client.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Accept": "application/json, text/event-stream"},
            )
            outputs.response(f"{phase} {who} POST /mcp", mcp)
            with client.stream("GET", "/ui/api/shared/board/events", timeout=10) as stream:
                first = next(stream.iter_bytes(), b"")  # a live stream runs until closed: its snapshot
                outputs.add(f"{phase} {who} events", f"{stream.status_code} {dict(stream.headers)} {first!r}")
    return seen


def test_the_redis_password_never_leaves_the_process(
    guarded_redis: tuple[str, str, subprocess.Popen[bytes]],
) -> None:
    url, password, redis_proc = guarded_redis
    outputs = _Outputs()

    created = outputs.cli(url, "--json", "keys", "create", "--tenant", "acme", "--admin")
    assert created.returncode == 0, created.stderr
    token = created.stdout.split('"token": "')[1].split('"')[0]
    assert outputs.cli(url, "sessions", "create", "s1").returncode == 0
    up = outputs.cli(url, "doctor")
    assert up.returncode == 0 and "redis reachable at redis://:***@127.0.0.1" in up.stdout

    with memstack_serve(url, "--auth", "keys", "--log-level", "debug") as served:
        up_responses = _hit_everything(served.base, token, outputs, "up")
        assert up_responses["keyed GET /v1/info"].status_code == 200
        assert up_responses["keyed GET /readyz"].status_code == 200

        redis_proc.terminate()  # Redis goes away while the server runs
        redis_proc.wait(timeout=10)
        down = _hit_everything(served.base, token, outputs, "down")
        ready = down["anonymous GET /readyz"]
        assert ready.status_code == 503
        assert ready.json()["detail"].startswith("engine 'redis' is not ready: it cannot be reached")
        assert down["keyed GET /v1/sessions"].status_code == 503
        assert down["anonymous GET /v1/sessions"].status_code in (401, 503)

        # The CLI on the same URL, Redis down: one error line each, exit 4, no password.
        for args in (("doctor",), ("keys", "list"), ("sessions", "list"), ("export", "-")):
            done = outputs.cli(url, *args)
            assert done.returncode == 4, (args, done.stderr)
            assert "redis://:***@127.0.0.1" in done.stderr or "127.0.0.1" in done.stderr
        for json_flag in ((), ("--json",)):
            outputs.cli(url, *json_flag, "keys", "create", "--tenant", "acme")
        refused = outputs.cli(url, "serve", "--port", "1")  # a second server cannot even start
        assert refused.returncode in (1, 2, 4) and "Traceback" not in refused.stderr
    outputs.add("serve stderr", served.stderr)
    assert "memstack serving redis (redis://:***@127.0.0.1:" in served.stderr
    assert "engine 'redis' is not ready" in served.stderr  # the operator's log says why, redacted

    searched = sum(len(text) for _, text in outputs.items)
    hits = [label for label, text in outputs.items if password in text or password.upper() in text.upper()]
    assert hits == [], hits
    assert searched > 100_000  # the search covered real output, not empty strings
