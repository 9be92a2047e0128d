"""``memstack sessions`` against a real SQLite file."""

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
    result = CliRunner().invoke(app, [*root, "sessions", *args])
    return result.exit_code, result.stdout, result.stderr


def test_session_lifecycle_as_json(url: str) -> None:
    assert run(url, "create", "s1", as_json=True)[0] == 0
    assert run(url, "put", "s1", "name", '"Ada"', as_json=True)[0] == 0
    assert run(url, "put", "s1", "obj", '{"a": [1, 2]}', as_json=True)[0] == 0
    assert run(url, "put", "s1", "word", "hello world", as_json=True)[0] == 0
    code, out, _ = run(url, "incr", "s1", "n", "5", as_json=True)
    assert code == 0
    assert json.loads(out)["value"] == 5
    assert json.loads(run(url, "incr", "s1", "n", as_json=True)[1])["value"] == 6
    assert json.loads(run(url, "incr", "s1", "f", "0.5", as_json=True)[1])["value"] == 0.5
    assert json.loads(run(url, "list", as_json=True)[1]) == {"items": ["s1"], "next_cursor": None}
    assert json.loads(run(url, "get", "s1", "obj", as_json=True)[1])["value"] == {"a": [1, 2]}
    assert json.loads(run(url, "get", "s1", "word", as_json=True)[1])["value"] == "hello world"
    shown = json.loads(run(url, "show", "s1", as_json=True)[1])["values"]
    assert shown == {"f": 0.5, "n": 6, "name": "Ada", "obj": {"a": [1, 2]}, "word": "hello world"}
    history = json.loads(run(url, "history", "s1", "--limit", "2", as_json=True)[1])["entries"]
    assert [(e["op"], e["key"]) for e in history] == [("increment", "n"), ("increment", "f")]
    assert json.loads(run(url, "clear", "s1", "word", as_json=True)[1])["cleared"] == ["word"]
    assert json.loads(run(url, "clear", "s1", as_json=True)[1])["cleared"] == ["f", "n", "name", "obj"]
    assert json.loads(run(url, "delete", "s1", as_json=True)[1])["cleared"] == []
    assert json.loads(run(url, "list", as_json=True)[1])["items"] == []


def test_human_output(url: str) -> None:
    assert run(url, "list")[1].strip() == "no sessions"
    run(url, "put", "h", "k", "42", "--create")
    assert run(url, "get", "h", "k")[1].strip() == "42"
    code, out, _ = run(url, "show", "h")
    assert code == 0
    assert "k" in out
    assert "42" in out
    code, out, _ = run(url, "history", "h")
    assert code == 0
    assert "put" in out
    assert run(url, "list")[1].strip() == "h"


def test_value_parsing(url: str) -> None:
    run(url, "create", "v")
    for raw, expected in (("123", 123), ('"123"', "123"), ("true", True), ("null", None), ("{bad", "{bad")):
        run(url, "put", "v", "k", raw)
        assert json.loads(run(url, "get", "v", "k", as_json=True)[1])["value"] == expected


def test_exit_codes(url: str) -> None:
    code, _, err = run(url, "get", "nope", "k", as_json=True)
    assert code == EXIT["not_found"] == 3
    assert json.loads(err)["error"] == "SessionNotFound"
    assert run(url, "put", "nope", "k", "1")[0] == 3
    assert run(url, "create", "bad id")[0] == EXIT["usage"] == 2
    run(url, "create", "s")
    assert run(url, "get", "s", "missing")[0] == 3
    assert run(url, "put", "s", "__keys__", "1")[0] == 2
    run(url, "put", "s", "t", "text")
    assert run(url, "incr", "s", "t")[0] == EXIT["error"]
    assert run(url, "incr", "s", "n", "abc")[0] == 2
    assert run(url, "create", "s")[0] == EXIT["error"]


def test_engine_down_exit_code() -> None:
    code, _, _ = run("redis://127.0.0.1:1/0", "list")
    assert code == EXIT["unavailable"] == 4


def test_create_with_ttl(url: str) -> None:
    assert run(url, "create", "t", "--ttl-hours", "1.5")[0] == 0
    assert json.loads(run(url, "list", as_json=True)[1])["items"] == ["t"]
