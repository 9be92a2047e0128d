"""``memstack conversations`` against a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memstack.doors.cli import app
from memstack.doors.cli._common import EXIT


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cli.db'}"


def run(url: str, *args: str, as_json: bool = False) -> tuple[int, str, str]:
    root = ["--url", url, *(["--json"] if as_json else [])]
    result = CliRunner().invoke(app, [*root, "conversations", *args])
    return result.exit_code, result.stdout, result.stderr


def seed_002(url: str) -> None:
    for args in (
        ("user", "A", "--id", "A"),
        ("assistant", "A1", "--id", "A1"),
        ("user", "B", "--id", "B"),
        ("assistant", "B1", "--id", "B1"),
        ("assistant", "A2", "--id", "A2", "--parent", "A"),
        ("user", "C", "--id", "C"),
        ("assistant", "C1", "--id", "C1"),
    ):
        code, out, err = run(url, "add", "c1", *args)
        assert code == 0, err
        assert out.strip() == args[3]


def test_thread_and_history_as_json(url: str) -> None:
    seed_002(url)
    thread = json.loads(run(url, "thread", "c1", as_json=True)[1])["items"]
    assert [m["message_id"] for m in thread] == ["A", "A2", "C", "C1"]
    assert thread[1]["parent_message_id"] == "A"
    old = json.loads(run(url, "thread", "c1", "--message", "B1", as_json=True)[1])["items"]
    assert [m["message_id"] for m in old] == ["A", "A1", "B", "B1"]
    history = json.loads(run(url, "history", "c1", as_json=True)[1])["messages"]
    assert history == [
        {"role": "user", "content": "A"}, {"role": "assistant", "content": "A2"},
        {"role": "user", "content": "C"}, {"role": "assistant", "content": "C1"},
    ]  # fmt: skip
    limited = json.loads(run(url, "history", "c1", "--message-limit", "2", as_json=True)[1])["messages"]
    assert limited == [{"role": "user", "content": "C"}, {"role": "assistant", "content": "C1"}]
    tight = json.loads(run(url, "history", "c1", "--max-tokens", "5", as_json=True)[1])["messages"]
    assert tight == [{"role": "assistant", "content": "C1"}]
    assert json.loads(run(url, "list", as_json=True)[1]) == {"items": ["c1"], "next_cursor": None}


def test_human_output(url: str) -> None:
    code, _, err = run(url, "history", "c1")
    assert (code, err.strip()) == (EXIT["not_found"], "error: EntryNotFound: no conversation 'c1'")
    assert run(url, "list")[1].strip() == "no conversations"
    seed_002(url)
    assert (
        run(url, "history", "c1", "--message", "B1")[1].strip()
        == "Human: A\nAssistant: A1\nHuman: B\nAssistant: B1"
    )
    table = run(url, "thread", "c1")[1]
    assert "A2" in table
    assert "B1" not in table


def test_new_thread_with_an_empty_parent(url: str) -> None:
    seed_002(url)
    assert run(url, "add", "c1", "user", "fresh", "--id", "F", "--parent", "")[0] == 0
    thread = json.loads(run(url, "thread", "c1", as_json=True)[1])["items"]
    assert [m["message_id"] for m in thread] == ["F"]


def test_errors_map_to_exit_codes(url: str) -> None:
    seed_002(url)
    code, _, err = run(url, "thread", "c1", "--message", "ghost", as_json=True)
    assert code == EXIT["not_found"]
    assert json.loads(err)["error"] == "EntryNotFound"
    assert run(url, "add", "c1", "robot", "x")[0] == EXIT["usage"]
    assert run(url, "add", "bad id", "user", "x")[0] == EXIT["usage"]
    assert run(url, "add", "c1", "user", "x", "--parent", "ghost")[0] == EXIT["not_found"]
    assert len(json.loads(run(url, "thread", "c1", "--message", "C1", as_json=True)[1])["items"]) == 4
