"""The seed's file layout: export, import, round trip, malformed files, no path escape."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstack import ManualClock, Memory
from memstack.compat.rockbot.longterm_files import entry_path, export_dir, import_dir
from memstack.foundation.errors import InvalidKey
from memstack.tiers.longterm import MemoryEntry


def fill(mem: Memory, clock: ManualClock) -> None:
    lt = mem.long_term("src")
    lt.save(content="Plays violin", category="user-preferences/music", tags=["hobby", "Music"], id="m1",
             metadata={"source": "chat", "nested": {"x": [1, "2"]}})  # fmt: skip
    lt.save(
        content="No category here", id="m2", created_at=datetime(2023, 5, 8, 13, 56, 7, 123456, tzinfo=UTC)
    )
    clock.advance(30)
    lt.save(content="Plays the cello now", category="user-preferences/music", tags=["hobby"], id="m1")


def test_export_layout_and_json_shape(mem: Memory, clock: ManualClock, tmp_path: Path) -> None:
    fill(mem, clock)
    assert export_dir(mem.long_term("src"), tmp_path) == 2
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json"))
    assert files == ["m2.json", "user-preferences/music/m1.json"]
    text = (tmp_path / "user-preferences/music/m1.json").read_text()
    assert text.startswith('{\n  "id": "m1",')  # indented
    data = json.loads(text)
    assert list(data) == ["id", "content", "category", "tags", "createdAt", "updatedAt", "metadata"]
    assert data["updatedAt"] is not None


def test_round_trip_into_a_fresh_scope(mem: Memory, clock: ManualClock, tmp_path: Path) -> None:
    fill(mem, clock)
    export_dir(mem.long_term("src"), tmp_path)
    progress: list[tuple[int, int]] = []
    report = import_dir(mem.long_term("dst"), tmp_path, progress=lambda d, t: progress.append((d, t)))
    assert sorted(report.imported) == ["m1", "m2"]
    assert report.skipped == []
    assert progress == [(1, 2), (2, 2)]
    assert mem.long_term("dst").entries() == mem.long_term("src").entries()
    assert [h.entry.id for h in mem.long_term("dst").search("cello")] == ["m1"]


def test_import_reads_field_names_case_insensitively(mem: Memory, tmp_path: Path) -> None:
    data = {
        "ID": "AbC",
        "Content": "hello",
        "CATEGORY": None,
        "Tags": ["t"],
        "CreatedAt": "2024-01-01T00:00:00Z",
    }
    (tmp_path / "x.json").write_text(json.dumps(data))
    report = import_dir(mem.long_term("ci"), tmp_path)
    assert report.imported == ["abc"]
    got = mem.long_term("ci").get("abc")
    assert got is not None
    assert got.created_at == datetime(2024, 1, 1, tzinfo=UTC)


def test_malformed_files_are_skipped_with_a_warning(
    mem: Memory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "good.json").write_text(json.dumps(
        {"id": "good", "content": "fine", "createdAt": "2024-01-01T00:00:00+00:00"}
    ))  # fmt: skip
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "escape.json").write_text(json.dumps(
        {"id": "e", "content": "x", "category": "../../etc", "createdAt": "2024-01-01T00:00:00+00:00"}
    ))  # fmt: skip
    (tmp_path / "blank.json").write_text(json.dumps(
        {"id": "b", "content": " ", "createdAt": "2024-01-01T00:00:00+00:00"}
    ))  # fmt: skip
    hidden = tmp_path / ".embeddings"
    hidden.mkdir()
    (hidden / "ignored.json").write_text("{}")
    with caplog.at_level(logging.WARNING, logger="memstack.tiers.longterm"):
        report = import_dir(mem.long_term("mal"), tmp_path)
    assert report.imported == ["good"]
    assert sorted(Path(p).name for p, _ in report.skipped) == ["blank.json", "broken.json", "escape.json"]
    logged = " ".join(r.getMessage() for r in caplog.records)
    for name in ("broken.json", "escape.json", "blank.json"):
        assert name in logged
    assert [e.id for e in mem.long_term("mal").entries()] == ["good"]


def test_paths_never_escape(tmp_path: Path) -> None:
    assert entry_path(tmp_path, MemoryEntry(id="a", content="x", category="a/b")) == tmp_path / "a/b/a.json"
    with pytest.raises(ValueError, match=r"\.\."):
        entry_path(tmp_path, MemoryEntry(id="a", content="x", category="../x"))
    with pytest.raises(InvalidKey):
        entry_path(tmp_path, MemoryEntry(id="../a", content="x"))


def test_import_missing_directory(mem: Memory, tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        import_dir(mem.long_term("x"), tmp_path / "nope")
