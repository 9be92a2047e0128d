"""The seed's working-memory files (spec item 47): export and import keep the remaining TTL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstack import ManualClock, Memory
from memstack.compat.rockbot.working_files import export_dir, import_dir
from memstack.foundation.errors import InvalidValue


def test_export_groups_by_top_segment(mem: Memory, tmp_path: Path) -> None:
    out = tmp_path / "out"
    mem.working("session/abc").set("emails", {"n": 3}, ttl=60, category="email", tags=["inbox"])
    mem.working("patrol/heartbeat").set("alert", "disk", ttl=120)
    assert export_dir(mem.engine, out) == 2
    assert sorted(p.name for p in out.iterdir()) == ["patrol.json", "session.json"]
    (record,) = json.loads((out / "session.json").read_text())
    assert {k: record[k] for k in ("key", "value", "category", "tags")} == {
        "key": "session/abc/emails",
        "value": {"n": 3},
        "category": "email",
        "tags": ["inbox"],
    }
    assert record["expiresAt"].endswith("+00:00")
    assert export_dir(mem.engine, tmp_path / "p", prefix="patrol") == 1


def test_import_keeps_remaining_ttl_and_drops_expired(
    mem: Memory, tmp_path: Path, clock: ManualClock
) -> None:
    out = tmp_path / "out"
    mem.working("session/abc").set("short", "s", ttl=10)
    mem.working("session/abc").set("long", "l", ttl=100)
    export_dir(mem.engine, out)
    mem.working("session/abc").clear()
    clock.advance(40)
    report = import_dir(mem.engine, out)
    assert (report.imported, report.expired, report.refused) == (1, 1, [])
    wm = mem.working("session/abc")
    assert [e.key for e in wm.list()] == ["session/abc/long"]
    clock.advance(59.999)
    assert wm.get("long") is not None
    clock.advance(0.001)
    assert wm.get("long") is None


def test_import_reports_what_it_refuses(mem: Memory, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    # A year ahead of the engine clock: engines refuse TTLs above 10 years (engines/_checks.py).
    future = datetime.fromtimestamp(mem.engine.clock.now() + 365 * 86400, UTC).isoformat()
    records = [
        {"key": "session/abc/a", "value": "1", "expiresAt": future},
        {"key": "session/abc/b", "value": "2", "expiresAt": future},
        {"key": "alone", "value": "3", "expiresAt": future},
        {"key": "session/abc/c", "value": "4", "expiresAt": "not a time"},
        "junk",
    ]
    (out / "session.json").write_text(json.dumps(records))
    for i in range(49):
        mem.working("session/abc").set(f"k{i}", i)
    report = import_dir(mem.engine, out)
    assert report.imported == 1
    assert [k for k, _ in report.refused] == ["session/abc/b", "alone", "session/abc/c", "None"]
    assert "is full" in report.refused[0][1]
    (out / "bad.json").write_text("{}")
    with pytest.raises(InvalidValue, match="JSON list"):
        import_dir(mem.engine, out)
