"""``memstack memories`` through typer's CliRunner, on a real SQLite file."""

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


def test_save_search_delete(url: str) -> None:
    saved = run_json(url, "memories", "save", "Alice plays the violin", "--category", "hobbies/music",
                     "--tags", "music, violin", "--scope", "alice")  # fmt: skip
    assert isinstance(saved, dict)
    assert saved["tags"] == ["music", "violin"]
    run(url, "memories", "save", "Bob plays football", "--scope", "bob")
    out = run(url, "memories", "search", "violin", "--scope", "alice")
    assert saved["id"] in out
    assert "bm25" in out
    assert saved["created_at"][:23] + "Z" in out  # ISO-8601 UTC to the millisecond in tables
    hits = run_json(url, "memories", "search", "plays", "--scope", "alice")["items"]  # type: ignore[index]  # a dict
    assert [h["entry"] for h in hits] == [saved]  # the HTTP API's shape: entry, score, sources
    assert hits[0]["score"] > 0
    assert hits[0]["sources"] == ["bm25"]
    recent = run_json(url, "memories", "search", "--scope", "bob", "--limit", "5")["items"]  # type: ignore[index]  # a dict
    assert [h["entry"]["content"] for h in recent] == ["Bob plays football"]
    filtered = run_json(
        url, "memories", "search", "--category", "hobbies", "--tags", "VIOLIN", "--scope", "alice"
    )["items"]  # type: ignore[index]  # a dict
    assert len(filtered) == 1
    assert run_json(url, "memories", "categories", "--scope", "alice") == {"items": ["hobbies/music"]}
    run(url, "memories", "delete", saved["id"], "--scope", "alice")
    assert run_json(url, "memories", "search", "violin", "--scope", "alice") == {"items": []}
    run(url, "memories", "delete", saved["id"], "--scope", "alice", code=3)


def test_bad_input_exits_2(url: str) -> None:
    run(url, "memories", "save", "x", "--category", "../etc", code=2)
    run(url, "memories", "save", "   ", code=2)
    run(url, "memories", "search", "--scope", "a:b", code=2)


def test_export_import_round_trip(url: str, tmp_path: Path) -> None:
    run(url, "memories", "save", "Lives in Chicago", "--category", "user/location", "--scope", "src")
    run(url, "memories", "save", "Uncategorised fact", "--scope", "src")
    out_dir = tmp_path / "export"
    assert run_json(url, "memories", "export", str(out_dir), "--scope", "src") == {
        "exported": 2, "directory": str(out_dir)
    }  # fmt: skip
    (out_dir / "broken.json").write_text("{")
    out = run(url, "memories", "import", str(out_dir), "--scope", "dst", "--allow-skips")
    assert "imported 2 memories, skipped 1 file" in out
    assert "broken.json" in out
    src = run_json(url, "memories", "search", "--scope", "src")
    dst = run_json(url, "memories", "search", "--scope", "dst")
    assert src == dst
    run(url, "memories", "import", str(tmp_path / "missing"), code=2)


def test_import_a_json_lines_file_in_bulk(url: str, tmp_path: Path) -> None:
    lines = [json.dumps({"id": f"j{n}", "content": f"fact number {n}", "tags": ["bulk"]}) for n in range(7)]
    source = tmp_path / "facts.jsonl"
    source.write_text("\n".join([*lines[:3], "", *lines[3:]]) + "\n")
    out = run_json(url, "memories", "import", str(source), "--scope", "bulk", "--batch-size", "3")
    assert out == {"imported": 7, "skipped": 0, "file": str(source)}
    hits = run_json(url, "memories", "search", "number 5", "--scope", "bulk")["items"]  # type: ignore[index]  # a dict
    assert hits[0]["entry"]["id"] == "j5" and hits[0]["entry"]["tags"] == ["bulk"]
    history = run_json(url, "memories", "history", "j0", "--scope", "bulk")["items"]  # type: ignore[index]  # a dict
    assert [(h["op"], h["actor"]) for h in history] == [("create", "import")]


def test_a_bad_line_stops_a_json_lines_import(url: str, tmp_path: Path) -> None:
    source = tmp_path / "facts.jsonl"
    source.write_text('{"id": "k1", "content": "kept"}\n{"id": "k2", "content": "  "}\n')
    out = run(url, "memories", "import", str(source), "--scope", "bad", "--batch-size", "1", code=2)
    assert "items[1]" in out and "line 2" in out
    assert [h["entry"]["id"] for h in run_json(url, "memories", "search", "--scope", "bad")["items"]] == [
        "k1"
    ]  # type: ignore[index]  # a dict
    source.write_text('{"content": "x"}\nnot json\n')
    assert "line 2: not JSON" in run(url, "memories", "import", str(source), "--scope", "bad2", code=2)
    assert run_json(url, "memories", "search", "--scope", "bad2") == {"items": []}
