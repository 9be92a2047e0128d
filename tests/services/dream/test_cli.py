"""``memstack dream`` through typer's CliRunner, on a real SQLite file and a loopback model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

import memstack
from memstack.doors.cli import app

from ._helpers import answer
from ._openai_server import fake_openai


@contextmanager
def default_tenant(url: str) -> Iterator[memstack.Memory]:
    """The data the CLI sees: tenant ``default`` (as the keyless server stores it)."""
    with memstack.open(url) as mem:  # tenant default, like the CLI
        yield mem


def run(url: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, ["--url", url, *args])
    assert result.exit_code == code, result.output
    return result.output


def test_dedupe_history_show_undo(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    with default_tenant(url) as mem:
        memory = mem.long_term("bob")
        memory.save(content="Bob likes the colour blue a lot")
        memory.save(content="bob likes the colour blue a lot!")
        memory.save(content="Bob owns two cats")
    assert "nothing" not in run(url, "dream", "run", "--scope", "bob", "--pass", "dedupe", "--dry-run")
    (record,) = json.loads(run(url, "--json", "dream", "run", "--scope", "bob", "--pass", "dedupe"))["items"]
    assert record["status"] == "applied" and len(record["retired"]) == 2
    history = json.loads(run(url, "--json", "dream", "history", "--scope", "bob"))["items"]
    assert [(h["id"], h["retired_count"], h["created_count"]) for h in history] == [(record["id"], 2, 1)]
    assert "dream records" in run(url, "dream", "history", "--scope", "bob")
    shown = run(url, "dream", "show", record["id"], "--scope", "bob")
    assert "- retired" in shown and "+ created" in shown
    report = json.loads(run(url, "--json", "dream", "undo", record["id"], "--scope", "bob"))
    assert len(report["restored"]) == 2
    run(url, "dream", "undo", record["id"], "--scope", "bob", code=1)  # already undone
    run(url, "dream", "show", "dnope", "--scope", "bob", code=3)
    run(url, "dream", "run", "--pass", "dream-harder", code=2)


def test_consolidate_with_a_model_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    with default_tenant(url) as mem:
        memory = mem.long_term("amy")
        first = memory.save(content="Amy likes tea")
        memory.save(content="Amy likes green tea")
        memory.save(content="Amy lives in Oslo")
        memory.save(content="Amy has a dog")
    assert "recorded correction" in run(
        url, "dream", "feedback", "correction", "tea is not coffee", "--scope", "amy"
    )
    with fake_openai([answer([first.id])]) as server:
        monkeypatch.setenv("MEMSTACK_CHAT_URL", server.url)
        monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "m")
        out = run(url, "dream", "run", "--scope", "amy", "--pass", "consolidate")
    assert "consolidate: applied" in out
    assert "- [correction] tea is not coffee" in server.requests[0]["messages"][1]["content"]
    with default_tenant(url) as mem:
        assert mem.long_term("amy").get(first.id) is None


def test_the_chat_model_comes_from_the_options_or_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'model.db'}"
    monkeypatch.delenv("MEMSTACK_CHAT_URL", raising=False)
    monkeypatch.delenv("MEMSTACK_CHAT_MODEL", raising=False)
    with default_tenant(url) as mem:
        memory = mem.long_term("amy")
        first = memory.save(content="Amy likes tea")
        memory.save(content="Amy likes green tea")
    missing = run(url, "dream", "run", "--scope", "amy", code=2)
    assert "--chat-url URL --model NAME, or MEMSTACK_CHAT_URL and MEMSTACK_CHAT_MODEL" in missing
    assert "both its URL" in run(url, "dream", "run", "--scope", "amy", "--model", "m", code=2)
    with fake_openai([answer([first.id])]) as server:
        out = run(
            url,
            "dream",
            "run",
            "--scope",
            "amy",
            "--pass",
            "consolidate",
            "--chat-url",
            server.url,
            "--model",
            "m",
        )
    assert "consolidate: applied" in out and server.requests[0]["model"] == "m"
