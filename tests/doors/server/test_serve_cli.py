"""``memstack serve`` and ``memstack keys`` as real processes: exit codes, banners, no tracebacks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn")

from .live import memstack_serve


def _memstack(url: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memstack.doors.cli", "--url", url, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ},
    )


def test_a_busy_port_fails_before_the_banner(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _memstack(f"sqlite:///{tmp_path / 'm.db'}", "serve", "--port", str(port))
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "serving" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--no-auth", "--host", "0.0.0.0"], "only allowed on loopback"),
        (["--no-auth", "--auth", "keys"], "contradict"),
        (["--auth", "maybe"], "expected 'keys'"),
    ],
)
def test_contradictory_or_unsafe_auth_is_refused_at_start(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = _memstack(f"sqlite:///{tmp_path / 'm.db'}", "serve", "--port", "1", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "serving" not in done.stderr and "Traceback" not in done.stderr


def test_keys_mode_without_keys_refuses_everything_and_warns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with memstack_serve(url, "--auth", "keys") as served:
        assert httpx.get(f"{served.base}/v1/sessions").status_code == 401
        assert (
            httpx.get(f"{served.base}/v1/sessions", headers={"X-Memstack-Tenant": "default"}).status_code
            == 401
        )
        created = _memstack(url, "--json", "keys", "create", "--tenant", "ops", "--admin")
        assert created.returncode == 0
        token = json.loads(created.stdout)["token"]
        assert json.loads(created.stdout)["admin"] is True
        listed = httpx.get(f"{served.base}/v1/keys", headers={"Authorization": f"Bearer {token}"})
        assert listed.status_code == 200 and listed.json()["items"][0]["admin"] is True
    assert "auth: API keys" in served.stderr
    assert "the API key store is empty" in served.stderr
    assert "Traceback" not in served.stderr


def test_loopback_without_keys_serves_tenant_default(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with memstack_serve(url) as served:
        assert httpx.post(f"{served.base}/v1/sessions", json={"session_id": "s1"}).status_code == 201
        assert httpx.get(f"{served.base}/v1/keys").status_code == 404
    assert "auth: none, tenant default" in served.stderr
    listed = _memstack(url, "--json", "export", "-")
    assert listed.returncode == 0 and "t:default:" in listed.stdout


def test_keys_refuse_bad_input_without_a_traceback(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    # Bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape).
    label = subprocess.run(
        [sys.executable, "-m", "memstack.doors.cli", "--url", url, "keys", "create", "--tenant", "acme",
         "--label", b"\xff".decode("utf-8", "surrogateescape")],
        capture_output=True, text=True, timeout=60, env={**os.environ},
    )  # fmt: skip
    assert label.returncode == 2 and "label: contains a lone surrogate" in label.stderr
    tenant = _memstack(url, "keys", "create", "--tenant", "no spaces")
    assert tenant.returncode == 2 and "tenant 'no spaces'" in tenant.stderr
    revoke = _memstack(url, "keys", "revoke", "nope")
    assert revoke.returncode == 3
    for done in (label, tenant, revoke):
        assert "Traceback" not in done.stderr
    assert json.loads(_memstack(url, "--json", "keys", "list").stdout) == []
