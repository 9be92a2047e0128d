"""Dream records: what a pass did, kept with the full content of every entry it retired.

A record is written in the same atomic batch as the pass's changes, under the scope's tag, with
an engine TTL of the retention period: the retired entries it holds (JSON and vector exactly as
they were stored) are the archive, unsearchable and never injected, dropped with the record. The
entries a pass superseded stay in the scope; the record keeps each one's version before and after
(undo puts the one before back, exactly).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Final

from ...engines import Engine
from ...foundation.errors import EntryNotFound, InvalidKey
from ...foundation.redact import redact
from ...foundation.timefmt import iso_utc
from ...tiers.longterm import MemoryEntry
from ...tiers.longterm.entry import entry_json, from_json
from .keys import DreamKeys

__all__ = [
    "DEFAULT_RETENTION",
    "ArchivedEntry",
    "CreatedEntry",
    "DreamRecord",
    "RecordStore",
    "SupersededEntry",
    "new_record_id",
]

DEFAULT_RETENTION: Final = 30 * 86400.0
"""Seconds a record (and the archive of the entries it retired) is kept: 30 days."""

STATUSES: Final = ("applied", "skipped", "refused", "dry-run", "undone")


def new_record_id() -> str:
    """A fresh record id (``d`` + 15 hex characters)."""
    return "d" + uuid.uuid4().hex[:15]


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else iso_utc(seconds)


@dataclass(frozen=True, slots=True)
class ArchivedEntry:
    """A retired entry exactly as it was stored: its JSON and its vector payload (or None)."""

    raw: str
    vector: str | None = None

    @property
    def entry(self) -> MemoryEntry:
        return from_json(self.raw)


@dataclass(frozen=True, slots=True)
class CreatedEntry:
    """An entry a pass wrote (its JSON as written), the ids it came from, and the conversation
    messages it was said in (the extract pass's provenance)."""

    raw: str
    source_ids: tuple[str, ...] = ()
    message_ids: tuple[str, ...] = ()

    @property
    def entry(self) -> MemoryEntry:
        return from_json(self.raw)


@dataclass(frozen=True, slots=True)
class SupersededEntry:
    """An entry a pass superseded: its JSON before and after (``valid_to``, ``superseded_by``)."""

    before: str
    after: str

    @property
    def entry(self) -> MemoryEntry:
        """The entry as the pass left it."""
        return from_json(self.after)


@dataclass(frozen=True, slots=True)
class DreamRecord:
    """One pass over one scope.

    ``status``: ``applied``, ``skipped`` (the model failed or answered nonsense: ``reason`` says
    why), ``refused`` (a guard rail), ``dry-run`` (never stored) or ``undone``.
    """

    id: str
    scope: str
    kind: str
    status: str
    at: float
    model: str | None = None
    prompt_digest: str | None = None
    retired: tuple[ArchivedEntry, ...] = ()
    created: tuple[CreatedEntry, ...] = ()
    unknown: tuple[str, ...] = ()
    dropped: int = 0
    reason: str | None = None
    undone_at: float | None = None
    kept: tuple[str, ...] = field(default=())
    superseded: tuple[SupersededEntry, ...] = ()

    def __post_init__(self) -> None:
        # The reason often quotes a model endpoint's error, which may echo the key it was sent or
        # a URL with credentials: it is stored and answered only through the one redaction rule
        # (a record stored before the rule was this strict is cleaned when it is read back).
        if self.reason:
            object.__setattr__(self, "reason", redact(self.reason))

    @property
    def actor(self) -> str:
        """How the entries' histories name this pass: ``dream:{id}``."""
        return f"dream:{self.id}"

    def to_json(self) -> str:
        """The stored form (lossless)."""
        return json.dumps(
            {
                "id": self.id,
                "scope": self.scope,
                "kind": self.kind,
                "status": self.status,
                "at": self.at,
                "model": self.model,
                "promptDigest": self.prompt_digest,
                "retired": [{"raw": a.raw, "vector": a.vector} for a in self.retired],
                "created": [
                    {"raw": c.raw, "sourceIds": list(c.source_ids), "messageIds": list(c.message_ids)}
                    for c in self.created
                ],
                "superseded": [{"before": x.before, "after": x.after} for x in self.superseded],
                "unknown": list(self.unknown),
                "dropped": self.dropped,
                "reason": self.reason,
                "undoneAt": self.undone_at,
                "kept": list(self.kept),
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> DreamRecord:
        d = json.loads(text)
        return cls(
            id=d["id"],
            scope=d["scope"],
            kind=d["kind"],
            status=d["status"],
            at=float(d["at"]),
            model=d.get("model"),
            prompt_digest=d.get("promptDigest"),
            retired=tuple(ArchivedEntry(a["raw"], a.get("vector")) for a in d.get("retired", [])),
            created=tuple(
                CreatedEntry(c["raw"], tuple(c.get("sourceIds", [])), tuple(c.get("messageIds", [])))
                for c in d.get("created", [])
            ),
            superseded=tuple(SupersededEntry(x["before"], x["after"]) for x in d.get("superseded", [])),
            unknown=tuple(d.get("unknown", [])),
            dropped=int(d.get("dropped", 0)),
            reason=d.get("reason"),
            undone_at=d.get("undoneAt"),
            kept=tuple(d.get("kept", [])),
        )

    def _head(self) -> dict[str, Any]:
        """The fields both serialised forms open with, in the same order."""
        return {
            "id": self.id,
            "scope": self.scope,
            "kind": self.kind,
            "status": self.status,
            "at": _iso(self.at),
            "model": self.model,
        }

    def to_dict(self) -> dict[str, Any]:
        """The public serialised form (entries as objects, ISO-8601 UTC times)."""
        return {
            **self._head(),
            "prompt_digest": self.prompt_digest,
            "retired": [entry_json(a.entry) for a in self.retired],
            "created": [
                {**entry_json(c.entry), "source_ids": list(c.source_ids), "message_ids": list(c.message_ids)}
                for c in self.created
            ],
            "superseded": [entry_json(x.entry) for x in self.superseded],
            "unknown_ids": list(self.unknown),
            "dropped": self.dropped,
            "reason": self.reason,
            "undone_at": _iso(self.undone_at),
            "kept": list(self.kept),
        }

    def summary(self) -> dict[str, Any]:
        """Counts only: the history listing's form (:func:`memstack.ops.wire.dream_summary_json`).

        The counts are ``retired_count`` / ``created_count``, never ``retired`` / ``created``: those
        name lists in :meth:`to_dict`, and one field name keeps one type.
        """
        return {
            **self._head(),
            "retired_count": len(self.retired),
            "created_count": len(self.created),
            "superseded_count": len(self.superseded),
            "reason": self.reason,
            "undone_at": _iso(self.undone_at),
        }

    def with_status(self, status: str, **changes: Any) -> DreamRecord:
        return replace(self, status=status, **changes)


class RecordStore:
    """The records of one scope on one engine."""

    def __init__(self, engine: Engine, scope: str) -> None:
        self.engine = engine
        self.scope = scope
        self.keys = DreamKeys.of(engine, scope)

    def read(self, record_id: str) -> tuple[DreamRecord, str]:
        """The record and its stored JSON.

        Raises:
            InvalidKey: a malformed id.
            EntryNotFound: no such record in this scope (never written, or past its retention).
        """
        if not isinstance(record_id, str) or not record_id.isalnum() or len(record_id) > 64:
            raise InvalidKey(f"dream record id {record_id!r}: must be 1-64 letters or digits")
        raw = self.engine.get(self.keys.record(record_id))
        if raw is None:
            raise EntryNotFound(f"dream record {record_id!r}: not found in scope {self.scope!r}")
        return DreamRecord.from_json(raw), raw

    def history(self, limit: int = 50) -> list[DreamRecord]:
        """The newest ``limit`` records, newest first (expired ones are skipped: a read never
        writes; the next :meth:`write` drops them from the index)."""
        ids = [m for m, _ in self.engine.zrange(self.keys.records, 0, -1, desc=True)]
        if not ids:
            return []
        raws = self.engine.mget([self.keys.record(i) for i in ids])
        return [DreamRecord.from_json(r) for r in raws if r is not None][:limit]

    def prune(self) -> int:
        """Drop expired records from the history index; returns how many."""
        ids = [m for m, _ in self.engine.zrange(self.keys.records, 0, -1)]
        if not ids:
            return 0
        raws = self.engine.mget([self.keys.record(i) for i in ids])
        gone = [i for i, r in zip(ids, raws, strict=True) if r is None]
        return int(self.engine.zrem(self.keys.records, *gone)) if gone else 0

    def write(self, batch: Any, record: DreamRecord, retention: float) -> None:
        """Queue the record and its history entry on ``batch``."""
        batch.set(self.keys.record(record.id), record.to_json(), px=max(1, int(retention * 1000)))
        batch.zadd(self.keys.records, {record.id: record.at})
