"""Undoing a pass: every retired entry back exactly, every superseded entry back to its version
before the pass (its validity exactly as it was), every created entry removed unless changed since."""

from __future__ import annotations

from dataclasses import dataclass

from ...foundation.errors import Conflict
from ...tiers.longterm import LongTermMemory, writes
from ...tiers.longterm.entry import from_json
from ...tiers.longterm.query import document_text
from .apply import APPLY_ATTEMPTS
from .record import DreamRecord, RecordStore

__all__ = ["UndoReport", "undo"]


@dataclass(frozen=True, slots=True)
class UndoReport:
    """What an undo did: ids restored (retired or superseded entries put back), created ids
    removed, and ids kept as they are because they changed since the pass (created ones, and
    superseded ones whose version is no longer the pass's)."""

    record_id: str
    restored: tuple[str, ...]
    removed: tuple[str, ...]
    kept: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "record_id": self.record_id,
            "restored": list(self.restored),
            "removed": list(self.removed),
            "kept": list(self.kept),
        }


def undo(memory: LongTermMemory, record_id: str) -> UndoReport:
    """Undo the applied pass ``record_id`` of ``memory``'s scope, in one atomic batch.

    Retired entries come back exactly (JSON, times, metadata, vectors; the search indexes follow
    through the change log); superseded entries get back their version before the pass (so their
    ``valid_to`` and ``superseded_by`` are what they were). A created entry is removed (with its
    history) only if it is still exactly as the pass wrote it; otherwise it is kept and reported,
    and a retired entry of the same id is not restored over it. A superseded entry changed since
    is kept and reported too. Every entry put back gets a ``restore`` item in its history, by the
    actor ``undo:{record id}``.

    Raises:
        InvalidKey: a malformed record id.
        EntryNotFound: no such record (or past its retention).
        Conflict: the record was not applied (skipped, refused, already undone), or the scope kept
            changing under the undo.
    """
    records = RecordStore(memory.engine, memory.scope)
    for _ in range(APPLY_ATTEMPTS):
        record, record_raw = records.read(record_id)
        if record.status != "applied":
            raise Conflict(
                f"dream record {record_id!r} is {record.status!r}: only an applied pass can be undone"
            )
        report = _undo_once(memory, records, record, record_raw)
        if report is not None:
            return report
    raise Conflict(f"scope {memory.scope!r}: changed under the undo of {record_id!r} {APPLY_ATTEMPTS} times")


def _undo_once(
    memory: LongTermMemory, records: RecordStore, record: DreamRecord, record_raw: str
) -> UndoReport | None:
    engine, keys = memory.engine, memory.keys
    actor, at = f"undo:{record.id}", engine.clock.now()
    created_ids = [c.entry.id for c in record.created]
    superseded_ids = [x.entry.id for x in record.superseded]
    found = engine.mget([keys.entry(i) for i in [*created_ids, *superseded_ids]])
    current = dict(zip([*created_ids, *superseded_ids], found, strict=True))
    retired_ids = {a.entry.id for a in record.retired}
    batch = engine.batch()
    batch.require_equal(records.keys.record(record.id), record_raw)
    for entry_id, raw in current.items():
        batch.require_equal(keys.entry(entry_id), raw)
    removed, kept, restored = [], [], []
    for created, entry_id in zip(record.created, created_ids, strict=True):
        if current[entry_id] == created.raw:
            removed.append(entry_id)
        elif current[entry_id] is not None:
            kept.append(entry_id)
    # an entry the pass rewrote in place (retired and created under one id) is restored, not dropped
    writes.drop(batch, keys, [i for i in removed if i not in retired_ids])
    for archived in record.retired:
        entry = from_json(archived.raw)
        if entry.id in kept:
            continue
        old = current.get(entry.id) if entry.id in removed else None
        writes.put(
            engine, batch, keys, memory.scope, entry, archived.raw,
            old_raw=old, op="restore", actor=actor, at=at,
        )  # fmt: skip
        if archived.vector is not None:
            batch.hset(keys.vectors, {entry.id: archived.vector})
        else:
            batch.hdel(keys.vectors, entry.id)
        restored.append(entry.id)
    for superseded, entry_id in zip(record.superseded, superseded_ids, strict=True):
        if current[entry_id] != superseded.after:
            kept.append(entry_id)  # changed (or deleted) since the pass: the newer version wins
            continue
        writes.put(
            engine, batch, keys, memory.scope, from_json(superseded.before), superseded.before,
            old_raw=superseded.after, op="restore", actor=actor, at=at,
        )  # fmt: skip
        restored.append(entry_id)
    done = record.with_status("undone", undone_at=at, kept=tuple(kept))
    batch.set(records.keys.record(record.id), done.to_json(), keepttl=True)
    if not batch.execute().applied:
        return None
    for archived in record.retired:
        entry = from_json(archived.raw)
        if archived.vector is None and entry.id in restored:
            memory.embed_later(entry.id, document_text(entry))
    return UndoReport(record.id, tuple(restored), tuple(removed), tuple(kept))
