"""A chat model that takes as long as it likes never starves another tenant: dream runs wait on
their own threads, a tenant past its share of runs is refused at once, and another tenant's
reads answer while every run is still outstanding (a real ``memstack serve`` on SQLite)."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn")

from .live import memstack_serve

TENANTS = 25  # two runs each: 50 runs, more than the 40 threads every other operation shares
HELD_AT_MOST = 120.0
SCOPES = ("zoe0", "zoe1", "zoe2")  # the model never holds a call longer (a failed test ends, never hangs)


class HeldModel:
    """A chat model on loopback that answers nothing until released (the 45-second model)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.arrived = threading.Condition()
        self.calls = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with model.arrived:
                    model.calls += 1
                    model.arrived.notify_all()
                model.release.wait(HELD_AT_MOST)
                payload = json.dumps({"error": "no"}).encode()
                with contextlib.suppress(OSError):
                    self.send_response(500)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def wait_for(self, calls: int) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: self.calls >= calls, timeout=60)


@pytest.fixture
def held_model() -> Iterator[HeldModel]:
    model = HeldModel()
    thread = threading.Thread(target=model.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        model.release.set()
        model.server.shutdown()
        model.server.server_close()
        thread.join()


def test_held_dream_runs_leave_other_tenants_reads_answering(
    held_model: HeldModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTACK_CHAT_URL", held_model.url)
    monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "m")
    monkeypatch.setenv("MEMSTACK_CHAT_DEADLINE", "600")
    url = f"sqlite:///{tmp_path / 'm.db'}"
    args = ("--no-auth", "--model-threads", "4", "--model-runs-per-tenant", "2")
    assert os.environ["MEMSTACK_CHAT_URL"] == held_model.url
    with (
        memstack_serve(url, *args) as served,
        httpx.Client(base_url=served.base, timeout=HELD_AT_MOST) as client,
        ThreadPoolExecutor(2 * TENANTS) as pool,
    ):
        tenants = [f"t{n}" for n in range(TENANTS)]
        for tenant in tenants:
            for scope, text in itertools.product(SCOPES, ("Zoe likes hiking", "Zoe reads poetry")):
                client.post(
                    f"/v1/memories?scope={scope}",
                    json={"content": text},
                    headers={"X-Memstack-Tenant": tenant},
                )

        def run(tenant: str, scope: str) -> int:
            headers = {"X-Memstack-Tenant": tenant}
            body = {"passes": ["consolidate"]}
            return client.post(f"/v1/dream/runs?scope={scope}", json=body, headers=headers).status_code

        # Two scopes: one run per scope (a scope's second run would wait for the first's lease).
        runs: list[Future[int]] = [pool.submit(run, t, s) for t in tenants for s in SCOPES[:2]]
        assert held_model.wait_for(4)  # the slow threads are all held by the model
        with httpx.Client(base_url=served.base, timeout=10) as other:
            for _ in range(20):
                read = other.get("/v1/sessions", headers={"X-Memstack-Tenant": "reader"})
                assert read.status_code == 200
            third = other.post(
                "/v1/dream/runs?scope=zoe2",
                json={"passes": ["consolidate"]},
                headers={"X-Memstack-Tenant": "t0"},
            )
            assert third.status_code == 429 and third.headers["Retry-After"]
        assert not any(r.done() for r in runs)  # every run was still outstanding meanwhile
        assert held_model.calls == 4  # and none but the slow threads' four reached the model
        held_model.release.set()
        statuses = [r.result(timeout=HELD_AT_MOST) for r in runs]
    assert 429 not in statuses and all(s < 500 for s in statuses)


def test_the_dry_run_tool_runs_on_the_model_threads_under_the_tenants_share(
    held_model: HeldModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTACK_CHAT_URL", held_model.url)
    monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "m")
    monkeypatch.setenv("MEMSTACK_CHAT_DEADLINE", "600")
    url = f"sqlite:///{tmp_path / 'm.db'}"
    args = ("--no-auth", "--model-threads", "1", "--model-runs-per-tenant", "2")
    headers = {"X-Memstack-Tenant": "t0"}
    with (
        memstack_serve(url, *args) as served,
        httpx.Client(base_url=served.base, timeout=HELD_AT_MOST, headers=headers) as client,
        ThreadPoolExecutor(2) as pool,
    ):
        for scope, text in itertools.product(SCOPES, ("Zoe likes hiking", "Zoe reads poetry")):
            client.post(f"/v1/memories?scope={scope}", json={"content": text})

        def dry_run(scope: str) -> int:
            body = {"arguments": {"passes": ["consolidate"]}, "scope": scope}
            return client.post("/v1/tools/dream_dry_run", json=body).status_code

        runs = [pool.submit(dry_run, scope) for scope in SCOPES[:2]]
        assert held_model.wait_for(1)
        with httpx.Client(base_url=served.base, timeout=10, headers=headers) as other:
            third = other.post(
                "/v1/tools/dream_dry_run", json={"arguments": {"passes": ["consolidate"]}, "scope": "zoe2"}
            )
            assert third.status_code == 429  # the tenant's share: two running or waiting
            assert other.get("/v1/sessions").status_code == 200
        assert held_model.calls == 1  # one model thread: the second dry run waits for it
        held_model.release.set()
        statuses = [r.result(timeout=HELD_AT_MOST) for r in runs]
    assert all(s < 500 for s in statuses), statuses
