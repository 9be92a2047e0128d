"""``memstack keys``, ``export``/``import``, ``doctor`` and ``serve --stdio`` on a real SQLite file."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import click
import pytest
import typer.main
from typer.testing import CliRunner

from memstack.doors.cli import app

runner = CliRunner()


def _run(url: str, *args: str) -> tuple[int, str]:
    """Exit code and standard output (progress bars and errors go to standard error)."""
    result = runner.invoke(app, ["--url", url, *args])
    return result.exit_code, result.stdout


def _stderr(url: str, *args: str) -> str:
    return runner.invoke(app, ["--url", url, *args]).stderr


def test_keys_lifecycle(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    code, out = _run(url, "--json", "keys", "create", "--tenant", "acme", "--label", "ci")
    assert code == 0
    created = json.loads(out)
    assert created["token"].startswith(f"msk_{created['key_id']}_")
    code, out = _run(url, "--json", "keys", "list")
    assert code == 0
    (listed,) = json.loads(out)
    assert listed["created_at"].endswith("Z")
    del listed["created_at"]
    expected = {"key_id": created["key_id"], "tenants": ["acme"], "label": "ci", "admin": False, "rate": None}
    assert listed == expected
    assert created["token"] not in out
    assert _run(url, "keys", "revoke", created["key_id"])[0] == 0
    assert _run(url, "keys", "revoke", created["key_id"])[0] == 3
    assert _run(url, "keys", "create", "--tenant", "bad name")[0] == 2


def test_export_import_round_trip(tmp_path: Path) -> None:
    source, target = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    assert _run(source, "sessions", "create", "s1")[0] == 0
    assert _run(source, "sessions", "put", "s1", "topic", '{"a": 1}')[0] == 0
    dump = tmp_path / "dump.jsonl"
    code, out = _run(source, "--json", "export", str(dump))
    assert code == 0
    assert json.loads(out)["exported"] >= 4
    exported = json.loads(out)["exported"]
    code, out = _run(target, "--json", "import", str(dump))
    assert code == 0
    assert json.loads(out)["imported"] == exported
    second = tmp_path / "again.jsonl"
    assert _run(target, "export", str(second))[0] == 0
    assert second.read_text() == dump.read_text()


def test_tenant_export_only_holds_that_tenant(tmp_path: Path) -> None:
    from memstack.engines import open_engine
    from memstack.engines.prefixed import tenant_engine

    url = f"sqlite:///{tmp_path / 'm.db'}"
    with open_engine(url) as engine:
        tenant_engine(engine, "acme").set("k", "acme")
        tenant_engine(engine, "beta").set("k", "beta")
    dump = tmp_path / "acme.jsonl"
    assert _run(url, "export", str(dump), "--tenant", "acme")[0] == 0
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert lines == [{"key": "k", "type": "string", "value": "acme", "pttl": None}]


def test_doctor(tmp_path: Path) -> None:
    code, out = _run(f"sqlite:///{tmp_path / 'm.db'}", "--json", "doctor")
    assert code == 0
    checks = {row["check"]: row["result"] for row in json.loads(out)}
    assert checks["engine"].startswith("sqlite reachable")
    assert "extra server" in checks
    assert re.fullmatch(r"[\d.]+ MB in \d+ index\(es\) of \d+ MB \(MEMSTACK_INDEX_MEMORY_MB\), \d+ evicted",
                        checks["index caches"])  # fmt: skip
    code, _ = _run("redis://127.0.0.1:1/0", "doctor")
    assert code == 4


def test_serve_refuses_no_auth_on_a_public_interface(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    assert _run(url, "serve", "--no-auth", "--host", "0.0.0.0")[0] == 2
    assert "only allowed on loopback" in _stderr(url, "serve", "--no-auth", "--host", "0.0.0.0")


def test_serve_stdio_speaks_mcp(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memstack.doors.cli", "--url", f"sqlite:///{tmp_path / 'm.db'}", "serve", "--stdio"],
        env={**os.environ},
    )

    async def run() -> tuple[list[str], str]:
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            await client.call_tool("session_put", {"key": "k", "value": 7, "session_id": "desk"})
            result = await client.call_tool("session_get", {"key": "k", "session_id": "desk"})
            return names, "".join(part.text for part in result.content)

    names, text = asyncio.run(run())
    assert "save_memory" in names
    assert json.loads(text) == {"session_id": "desk", "key": "k", "value": 7}


def test_serve_has_an_option_for_every_limit_of_the_table() -> None:
    from memstack.doors.server.defaults import LIMITS

    group = typer.main.get_command(app)
    serve = group.get_command(click.Context(group), "serve")  # type: ignore[attr-defined]
    options = {max(p.opts, key=len): p for p in serve.params}
    for limit in LIMITS:
        option = options[limit.option]
        assert option.name == limit.name
        assert option.help is not None and option.help.startswith(limit.help)
        if limit.env:  # the part reads the variable, so the option itself has no default
            assert option.default is None and f"${limit.env}, else {limit.default:g}" in option.help
        else:
            assert option.default == limit.default
    assert options["--watch-idle"].name == "watch_idle_seconds"
    assert list(options).index("--retention") < list(options).index("--max-body-bytes")


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--watch-per-key", "0"], {}, "watch per_key 0"),
        (["--model-threads", "0"], {}, "threads=0"),
        ([], {"MEMSTACK_AUTH_FAILURE_BURST": "many"}, "$MEMSTACK_AUTH_FAILURE_BURST='many'"),
    ],
)
def test_serve_hands_each_limit_to_the_part_that_checks_it(
    tmp_path: Path, args: list[str], env: dict[str, str], named: str
) -> None:
    result = runner.invoke(app, ["--url", f"sqlite:///{tmp_path / 'm.db'}", "serve", *args], env=env)
    assert result.exit_code == 2
    assert named in result.stderr
