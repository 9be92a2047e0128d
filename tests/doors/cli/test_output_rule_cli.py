"""The hand-written commands (doctor, memories export/import, tenants, keys) keep the one output rule: text
for a person by default (never JSON, counts in the right number), JSON with --json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memstack.doors.cli import app


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cli.db'}"


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (args, result.stdout, result.stderr)
    return result.stdout


def both(url: str, *args: str, code: int = 0) -> tuple[str, Any]:
    """The command's human text (asserted not to be JSON) and its --json answer, parsed."""
    text = run("--url", url, *args, code=code)
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    return text, json.loads(run("--url", url, "--json", *args, code=code))


def test_export_and_import_speak_text_by_default_and_json_on_request(url: str, tmp_path: Path) -> None:
    run("--url", url, "memories", "save", "Ana likes tea", "--scope", "ana")
    text, data = both(url, "memories", "export", str(tmp_path / "out"), "--scope", "ana")
    assert text.startswith("exported 1 memory to ") and data["exported"] == 1
    text, data = both(url, "memories", "import", str(tmp_path / "out"), "--scope", "bob")
    assert text.strip() == "imported 1 memory, skipped 0 files"
    assert data == {"imported": 1, "skipped": 0, "skipped_files": []}
    lines = tmp_path / "in.jsonl"
    lines.write_text('{"content": "Bob likes jazz"}\n{"content": "Bob has a cat"}\n', encoding="utf-8")
    text, data = both(url, "memories", "import", str(lines), "--scope", "carl")
    assert text.startswith("imported 2 memories from ") and data["imported"] == 2


def test_keys_speak_text_by_default_and_json_on_request(url: str) -> None:
    text = run("--url", url, "keys", "create", "--tenant", "acme", "--tenant", "beta", "--label", "ci")
    assert text.startswith("key ") and "acme, beta" in text
    created = json.loads(run("--url", url, "--json", "keys", "create", "--tenant", "acme"))
    assert created["tenants"] == ["acme"] and created["token"]
    text, rows = both(url, "keys", "list")
    assert "acme, beta" in text and '["acme"' not in text  # tenants read as a list, not as JSON
    assert sorted(r["tenants"] for r in rows) == [["acme"], ["acme", "beta"]]
    text = run("--url", url, "keys", "revoke", created["key_id"])
    assert text.strip() == f"revoked {created['key_id']}"
    gone = json.loads(run("--url", url, "--json", "keys", "revoke", created["key_id"], code=3))
    assert gone == {"revoked": False, "key_id": created["key_id"]}
    assert (
        run("--url", url, "keys", "revoke", created["key_id"], code=3).strip()
        == f"no key {created['key_id']!r}"
    )


def test_tenants_speak_text_by_default_and_json_on_request(url: str) -> None:
    run("--url", url, "--tenant", "acme", "memories", "save", "Acme's secret")
    text, data = both(url, "tenants", "adopt", "--into", "default", "--dry-run")
    assert text.startswith("would move 0 keys in 0 families into tenant default") and data["families"] == 0
    text, data = both(url, "tenants", "purge", "acme", "--yes")
    assert text.startswith("purged tenant acme: ") and data["remaining"] == 0


def test_doctor_speaks_text_by_default_and_json_on_request(url: str) -> None:
    text, rows = both(url, "doctor")
    assert "memstack doctor" in text and "{'" not in text  # no Python dict shown to a person
    checks = {row["check"]: row["result"] for row in rows}
    assert checks["extra postgres"].startswith(("installed (psycopg ", "missing (psycopg "))
    assert {"extra crewai", "extra autogen", "extra adk", "extra openai-agents"} <= set(checks)
    assert checks["engine"].startswith("sqlite reachable")
