"""``memstack working`` and ``memstack context`` through typer's CliRunner, on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memstack.doors.cli import app


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cli.db'}"


def run(url: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, ["--url", url, *args])
    assert result.exit_code == code, result.output
    return result.output


def run_json(url: str, *args: str) -> object:
    return json.loads(run(url, "--json", *args))


def test_set_list_get_search_delete(url: str) -> None:
    run(
        url,
        "working",
        "set",
        "notes",
        "hello world",
        "-n",
        "session/abc",
        "--tags",
        "a, b",
        "--category",
        "x",
    )
    run(url, "working", "set", "alert", '{"disk": "full"}', "-n", "patrol/hb", "--json-value", "--ttl", "60")
    rows = run_json(url, "working", "list")["items"]  # type: ignore[index]  # a dict
    assert [(r["key"], r["category"], r["tags"]) for r in rows] == [
        ("patrol/hb/alert", None, []),
        ("session/abc/notes", "x", ["a", "b"]),
    ]
    assert all(r["value"] is None for r in rows)  # a listing never reads values
    assert [r["key"] for r in run_json(url, "working", "list", "patrol")["items"]] == ["patrol/hb/alert"]  # type: ignore[index]  # a dict
    assert [r["key"] for r in run_json(url, "working", "list", "-n", "session/abc")["items"]] == [  # type: ignore[index]  # a dict
        "session/abc/notes"
    ]
    assert run(url, "working", "get", "session/abc/notes") == "hello world\n"
    long_value = "word " * 60
    run(url, "working", "set", "long", long_value, "-n", "session/abc")
    assert run(url, "working", "get", "session/abc/long") == long_value + "\n"
    run(url, "working", "delete", "long", "-n", "session/abc")
    got = run_json(url, "working", "get", "session/abc/notes")
    assert isinstance(got, dict)
    assert (got["value"], got["tags"], got["expires_at"][-1]) == ("hello world", ["a", "b"], "Z")
    assert run(url, "working", "get", "notes", "-n", "session/abc") == "hello world\n"
    assert json.loads(run(url, "working", "get", "patrol/hb/alert")) == {"disk": "full"}

    def keys(*args: str) -> list[str]:
        found = run_json(url, "working", "search", *args)
        assert isinstance(found, dict)
        return [h["key"] for h in found["items"]]

    assert keys("disk") == ["patrol/hb/alert"]
    assert keys("disk", "--prefix", "session") == []
    assert keys("--tags", "b") == ["session/abc/notes"]
    assert keys("--category", "x") == ["session/abc/notes"]
    run(url, "working", "delete", "notes", "-n", "session/abc")
    run(url, "working", "get", "session/abc/notes", code=3)
    run(url, "working", "delete", "notes", "-n", "session/abc", code=3)


def test_usage_errors(url: str) -> None:
    assert "give its full path or the namespace it belongs to" in run(url, "working", "get", "notes", code=2)
    assert "writing needs a namespace" in run(url, "working", "set", "k", "v", code=2)
    run(url, "working", "set", "patrol/x/k", "v", "-n", "session/abc", code=2)
    run(url, "working", "set", "k", "v", "-n", "session/abc", "--ttl", "0", code=2)


def test_context_prints_the_turn(url: str) -> None:
    saved = run_json(url, "memories", "save", "Alice likes jazz", "--category", "music")
    assert isinstance(saved, dict)
    run(url, "working", "set", "notes", "v", "-n", "session/abc")
    out = run(url, "context", "--session", "abc", "--system", "Be brief.", "jazz")
    assert out.startswith(
        "[system]\nBe brief.\n\n"
        "[system]\nRecalled from long-term memory (relevant to this message):\n"
        f"- [{saved['id']}] (music): Alice likes jazz\n\n"
        "[system]\nWorking memory (scratch space — use search_working_memory or get_from_working_memory to "
        "retrieve):\n- session/abc/notes: expires in "
    )
    assert "[user]\njazz\n\n+ system prompt: system prompt (never dropped)\n" in out
    built = run_json(url, "context", "--session", "abc", "jazz", "--mark-injected")
    assert isinstance(built, dict)
    assert [m["role"] for m in built["messages"]] == ["system", "system", "user"]
    again = run_json(url, "context", "--session", "abc", "jazz")
    assert isinstance(again, dict)
    assert [m["role"] for m in again["messages"]] == ["system", "user"]
    assert again["explain"][-1] == {
        "kind": "recall",
        "id": saved["id"],
        "included": False,
        "reason": "already injected earlier in this session",
    }
    run(url, "context", "--session", "bad id", "x", code=2)
