"""The seed's working-memory files (spec item 47): export to and import from a directory.

One JSON file per top-level key segment (``session.json``, ``patrol.json``, ``subagent.json``;
a key without ``/`` would go to ``_other.json``), each a list of
``{key, value, storedAt, expiresAt, category, tags}`` with ISO 8601 UTC times. On import, expired
entries are dropped and live ones are set again with their remaining TTL, namespace by namespace
(the cap applies: what does not fit is reported, never silently lost).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...engines.base import Engine
from ...foundation.errors import InvalidInput, InvalidValue, NamespaceFull
from ...foundation.limits import MAX_TTL_SECONDS, short_repr
from ...tiers.working import keys as wkeys
from ...tiers.working.entry import WorkingEntry
from ...tiers.working.store import WorkingMemory

__all__ = ["ImportReport", "export_dir", "import_dir"]

OTHER_FILE = "_other.json"


@dataclass
class ImportReport:
    """What :func:`import_dir` did: entries set, entries already expired, entries refused (and why)."""

    imported: int = 0
    expired: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()


def _seconds(value: object, name: str) -> float:
    if not isinstance(value, str):
        raise InvalidValue(f"{name} {short_repr(value)}: must be an ISO 8601 time string")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidValue(f"{name} {short_repr(value)}: not an ISO 8601 time ({exc})") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def _record(entry: WorkingEntry) -> dict[str, Any]:
    return {
        "key": entry.key,
        "value": entry.value,
        "storedAt": _iso(entry.stored_at),
        "expiresAt": _iso(entry.expires_at),
        "category": entry.category,
        "tags": list(entry.tags),
    }


def export_dir(engine: Engine, directory: str | Path, prefix: str = "") -> int:
    """Write the live entries under ``prefix`` (default: all) as one file per top segment.

    Returns how many entries were written. Files of segments without entries are not created.

    Raises:
        InvalidKey: an ill-formed prefix.
    """
    entries = WorkingMemory(engine, "cli/export").list(prefix)
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        name = f"{wkeys.top_segment(entry.key)}.json" if "/" in entry.key else OTHER_FILE
        groups.setdefault(name, []).append(_record(entry))
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    for name, records in groups.items():
        (target / name).write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")
    return len(entries)


def import_dir(engine: Engine, directory: str | Path) -> ImportReport:
    """Set again every live entry of the ``*.json`` files in ``directory`` with its remaining TTL.

    Raises:
        InvalidValue: a file that is not a JSON list of entry records.
    """
    report = ImportReport()
    now = engine.clock.now()
    for path in sorted(Path(directory).glob("*.json")):
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidValue(f"working-memory file {str(path)!r}: not readable JSON ({exc})") from exc
        if not isinstance(records, list):
            raise InvalidValue(f"working-memory file {str(path)!r}: must hold a JSON list of entries")
        for record in records:
            _import_one(engine, record, now, report)
    return report


def _import_one(engine: Engine, record: object, now: float, report: ImportReport) -> None:
    key = record.get("key") if isinstance(record, dict) else None
    try:
        if not isinstance(record, dict) or not isinstance(key, str):
            raise InvalidValue(f"record {record!r:.80}: must be an object with a string 'key'")
        remaining = _seconds(record.get("expiresAt"), "expiresAt") - now
        if remaining <= 0:
            report.expired += 1
            return
        full = wkeys.normalize_key(key)
        namespace = wkeys.namespace_of(full)
        if "/" not in namespace:
            raise InvalidValue(f"key {short_repr(key)}: a key of one segment has no namespace to write to")
        # An entry meant to outlive the ten-year TTL limit keeps it: the longest a TTL can be.
        WorkingMemory(engine, namespace).set(
            full,
            record.get("value"),
            ttl=min(remaining, MAX_TTL_SECONDS),
            category=record.get("category"),
            tags=record.get("tags"),
        )
        report.imported += 1
    except (InvalidInput, NamespaceFull) as exc:
        report.refused.append((str(key), str(exc)))
