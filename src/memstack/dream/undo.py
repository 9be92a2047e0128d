"""Undoing a pass: every retired entry back exactly, every created entry removed unless changed since."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Conflict
from ..longterm import LongTermMemory
from ..longterm.entry import from_json
from ..longterm.query import document_text
from .apply import APPLY_ATTEMPTS, log_change
from .record import RecordStore

__all__ = ["UndoReport", "undo"]


@dataclass(frozen=True, slots=True)
class UndoReport:
    """What an undo did: ids restored, created ids removed, created ids kept (changed since)."""

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
    through the change log). A created entry is removed only if it is still exactly as the pass
    wrote it; otherwise it is kept and reported, and a retired entry of the same id is not
    restored over it.

    Raises:
        InvalidKey: a malformed record id.
        EntryNotFound: no such record (or past its retention).
        Conflict: the record was not applied (skipped, refused, already undone), or the scope kept
            changing under the undo.
    """
    engine, keys = memory.engine, memory.keys
    records = RecordStore(engine, memory.scope)
    for _ in range(APPLY_ATTEMPTS):
        record, record_raw = records.read(record_id)
        if record.status != "applied":
            raise Conflict(
                f"dream record {record_id!r} is {record.status!r}: only an applied pass can be undone"
            )
        created_ids = [c.entry.id for c in record.created]
        current = engine.mget([keys.entry(i) for i in created_ids]) if created_ids else []
        batch = engine.batch()
        batch.require_equal(records.keys.record(record.id), record_raw)
        removed, kept = [], []
        for created, entry_id, now_raw in zip(record.created, created_ids, current, strict=True):
            batch.require_equal(keys.entry(entry_id), now_raw)
            if now_raw == created.raw:
                removed.append(entry_id)
            elif now_raw is not None:
                kept.append(entry_id)
        for entry_id in removed:
            batch.delete(keys.entry(entry_id))
            batch.srem(keys.ids, entry_id)
            batch.hdel(keys.vectors, entry_id)
            log_change(batch, keys, "del", entry_id)
        restored = []
        for archived in record.retired:
            entry = from_json(archived.raw)
            if entry.id in kept:
                continue
            batch.set(keys.entry(entry.id), archived.raw)
            batch.sadd(keys.ids, entry.id)
            if archived.vector is not None:
                batch.hset(keys.vectors, {entry.id: archived.vector})
            else:
                batch.hdel(keys.vectors, entry.id)
            log_change(batch, keys, "put", entry.id)
            restored.append(entry.id)
        done = record.with_status("undone", undone_at=engine.clock.now(), kept=tuple(kept))
        batch.set(records.keys.record(record.id), done.to_json(), keepttl=True)
        if batch.execute().applied:
            for archived in record.retired:
                entry = from_json(archived.raw)
                if archived.vector is None and entry.id in restored:
                    memory.embed_later(entry.id, document_text(entry))
            return UndoReport(record.id, tuple(restored), tuple(removed), tuple(kept))
    raise Conflict(f"scope {memory.scope!r}: changed under the undo of {record_id!r} {APPLY_ATTEMPTS} times")
