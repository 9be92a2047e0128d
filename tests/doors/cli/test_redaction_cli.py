"""The CLI prints no credential: engine URLs, embedder endpoints and model keys are redacted."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from _redis_servers import free_port


def _memstack(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memstack.doors.cli", *args],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, **(env or {})},
    )


def test_doctor_hides_the_embedder_endpoint_password_and_the_model_key(tmp_path: Path) -> None:
    password, key = "pw" + secrets.token_hex(12), "sk-" + secrets.token_hex(16)
    endpoint = f"openai:http://bob:{password}@127.0.0.1:{free_port()}/v1#text-embedding-3-small"
    for flag in ((), ("--json",)):
        done = _memstack(
            "--url", f"sqlite:///{tmp_path / 'm.db'}", *flag, "doctor", "--embedder", endpoint,
            env={"OPENAI_API_KEY": key, "MEMSTACK_EMBEDDER_API_KEY": key},
        )  # fmt: skip
        out = done.stdout + done.stderr
        assert password not in out and key not in out, out
        assert "bob:***@127.0.0.1" in out  # the endpoint is still named, for the diagnosis


def test_an_unreachable_engine_url_is_reported_without_its_password() -> None:
    password = "pw" + secrets.token_hex(12)
    url = f"redis://:{password}@127.0.0.1:{free_port()}/0"
    for args in (("sessions", "list"), ("doctor",), ("keys", "list"), ("--json", "export", "-")):
        done = _memstack("--url", url, *args)
        assert done.returncode == 4, (args, done.stderr)
        assert password not in done.stdout + done.stderr
        assert "redis://:***@127.0.0.1" in done.stderr, done.stderr
    bad = _memstack("--url", f"redis://:{password}@127.0.0.1:99999/0", "sessions", "list")
    assert bad.returncode == 2 and password not in bad.stderr and "port '99999'" in bad.stderr


def test_a_password_holding_slash_space_and_at_is_never_printed() -> None:
    from urllib.parse import quote

    password = "p/w " + secrets.token_hex(6) + "@x"
    for written in (quote(password, safe=""), password.replace(" ", "%20")):
        url = f"redis://:{written}@127.0.0.1:{free_port()}/0"
        for args in (("doctor",), ("sessions", "list")):
            done = _memstack("--url", url, *args)
            out = done.stdout + done.stderr
            for shown in (password, written, password.split("/")[1], written.split("/")[-1]):
                assert shown not in out, (shown, out)
