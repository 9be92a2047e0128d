"""A command line that forgives: root options after the command, "did you mean", hints that name the
fix, exit codes where nothing was found, one output rule (text by default, JSON with --json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from memstack.doors.cli import app
from memstack.doors.cli._common import EXIT
from memstack.doors.cli._forgive import hoist_root_options
from memstack.doors.cli.render import render


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cli.db'}"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_root_options_after_the_command_are_the_root_options(url: str) -> None:
    assert run("--url", url, "sessions", "create", "s1")[0] == 0
    before = run("--url", url, "--json", "sessions", "list")
    after = run("sessions", "list", "--url", url, "--json")
    inline = run("sessions", "list", f"--url={url}", "--json")
    assert before == after == inline and json.loads(after[1])["items"] == ["s1"]
    assert run("sessions", "create", "s2", "--url", url)[0] == 0  # a positional before it


def test_a_command_s_own_option_of_a_root_name_stays_the_command_s() -> None:
    root = typer.main.get_command(app)
    assert hoist_root_options(root, ["serve", "--url", "u", "--port", "1"]) == [
        "--url",
        "u",
        "serve",
        "--port",
        "1",
    ]
    put = ["sessions", "put", "s1", "k", "1", "--create"]
    assert hoist_root_options(root, put) == put  # creates the session, not a directory
    keys = ["keys", "create", "--tenant", "acme", "--json"]
    assert hoist_root_options(root, keys) == ["--json", "keys", "create", "--tenant", "acme"]
    literal = ["sessions", "put", "s1", "k", "--", "--json"]
    assert hoist_root_options(root, literal) == literal  # after --, a value
    assert hoist_root_options(root, ["nope", "--json"]) == ["nope", "--json"]


def test_serve_takes_the_url_after_the_command(tmp_path: Path) -> None:
    code, _, err = run("serve", "--url", f"sqlite:///{tmp_path}/missing/m.db", "--port", "1")
    assert code == EXIT["usage"] and "No such option" not in err
    assert "pass the root option --create before the command" in err


def test_did_you_mean_for_commands_and_options(url: str) -> None:
    code, _, err = run("--url", url, "sesions", "list")
    assert code == EXIT["usage"] and "Did you mean 'sessions'" in err
    code, _, err = run("--url", url, "sessions", "lst")
    assert code == EXIT["usage"] and "Did you mean 'list'?" in err
    code, _, err = run("--url", url, "sessions", "list", "--lmit", "3")
    assert code == EXIT["usage"] and "No such option: --lmit. Did you mean '--limit'?" in err
    code, _, err = run("--url", url, "dream", "--help")
    assert code == 0


def test_dream_help_lists_extract() -> None:
    code, out, _ = run("dream", "--help")
    assert code == 0 and "extract" in out


def test_hints_name_the_fix(url: str) -> None:
    code, _, err = run("--url", url, "sessions", "put", "nope", "k", "1")
    assert code == EXIT["not_found"] and "add --create to create the session" in err
    assert run("--url", url, "sessions", "put", "nope", "k", "1", "--create")[0] == 0
    code, out, _ = run("--url", url, "--json", "memories", "save", "Ana lives in Lisbon", "--scope", "ana")
    saved = json.loads(out)["id"]
    for command in ("get", "history", "delete"):
        code, _, err = run("--url", url, "memories", command, saved)
        assert code == EXIT["not_found"], command
        assert "in scope 'default'" in err and "--scope SCOPE" in err, err
        code, _, err = run("--url", url, "memories", command, saved, "--scope", "elsewhere")
        assert code == EXIT["not_found"] and "in scope 'elsewhere'" in err and "--scope SCOPE" not in err


def test_history_finds_nothing_like_get_and_prints_text_by_default(url: str) -> None:
    _, out, _ = run("--url", url, "--json", "memories", "save", "Ana lives in Lisbon", "--scope", "ana")
    saved = json.loads(out)["id"]
    code, _, err = run("--url", url, "--json", "memories", "history", "nope", "--scope", "ana")
    assert code == EXIT["not_found"] and json.loads(err)["error"] == "EntryNotFound"
    code, out, _ = run("--url", url, "memories", "history", saved, "--scope", "ana")
    assert code == 0 and "create" in out and "Ana lives in Lisbon" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)
    code, out, _ = run("--url", url, "--json", "memories", "history", saved, "--scope", "ana")
    assert code == 0 and json.loads(out)["items"][0]["op"] == "create"


def test_every_command_prints_text_unless_json_is_asked(url: str) -> None:
    _, out, _ = run("--url", url, "--json", "memories", "save", "Ana lives in Lisbon", "--scope", "ana")
    saved = json.loads(out)["id"]
    code, out, _ = run("--url", url, "memories", "get", saved, "--scope", "ana")
    assert code == 0 and f"id: {saved}" in out and "content: Ana lives in Lisbon" in out
    assert run("--url", url, "shared", "put", "team", "plan", "[1, 2]")[0] == 0
    code, out, _ = run("--url", url, "shared", "show", "team")
    assert code == 0 and not out.lstrip().startswith("{")
    code, out, _ = run("--url", url, "--json", "shared", "show", "team")
    assert code == 0 and json.loads(out)


def test_dream_show_for_people_shows_superseded_entries_and_the_reason() -> None:
    entry = {"id": "e1", "content": "Ana lives in Lisbon"}
    record = {
        "kind": "extract", "status": "skipped", "at": "2026-11-29T05:00:00Z", "model": "m",
        "reason": "the model's answer was not JSON", "retired": [], "superseded": [entry],
        "created": [{"id": "e2", "content": "Ana lives in Berlin", "source_ids": ["e1"]}],
    }  # fmt: skip
    shown = render("dream.show", record)
    assert "~ superseded [e1] Ana lives in Lisbon" in shown
    assert "reason: the model's answer was not JSON" in shown
