"""Applying a plan: the pass's changes, its record and its archive in ONE atomic batch.

The batch is guarded by the stored JSON of every entry it retires (and the absence of every new
id), so a concurrent write makes it change nothing; it is then re-read and retried. After a
crash the pass is either fully applied with its record, or not at all.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from ..engines.base import Batch
from ..errors import Conflict
from ..keyspace import register
from ..longterm import LongTermMemory, MemoryEntry
from ..longterm.entry import from_json, to_json
from ..longterm.layout import ScopeKeys
from ..longterm.layout import log_change as layout_log_change
from ..longterm.query import document_text
from .plan import Plan, check_plan
from .record import ArchivedEntry, CreatedEntry, DreamRecord, RecordStore, new_record_id

__all__ = ["APPLY_ATTEMPTS", "apply_plan", "log_change", "owned_by", "skip_record"]

APPLY_ATTEMPTS: Final = 8
"""Optimistic retries of one pass racing other writers of the scope."""


def log_change(batch: Batch, keys: ScopeKeys, op: str, entry_id: str) -> None:
    """Queue the long-term change-log entry that keeps every process's search cache fresh."""
    layout_log_change(batch, keys, op, entry_id)


def owned_by(entry: MemoryEntry, source_ids: tuple[str, ...], sources: dict[str, str | None]) -> MemoryEntry:
    """``entry`` labelled with the subject of its sources when they all have the same one (what
    is only about one person stays theirs); unlabelled otherwise."""
    subjects = {sources.get(i) for i in source_ids}
    subject = subjects.pop() if len(subjects) == 1 and source_ids else None
    return replace(entry, subject=subject)


def apply_plan(
    memory: LongTermMemory,
    plan: Plan,
    *,
    model: str | None = None,
    prompt_digest: str | None = None,
    retention: float,
    force: bool = False,
    dry_run: bool = False,
) -> DreamRecord:
    """Apply ``plan`` to ``memory``'s scope with its record; ``dry_run`` only checks and describes it.

    Ids of ``plan.retire`` deleted meanwhile are reported as unknown.

    Raises:
        DreamRefused: a guard rail (see :func:`~memstack.dream.plan.check_plan`) and not ``force``.
        Conflict: an entry to retire changed since the plan was made (see ``Plan.basis``), or the
            scope kept changing under the pass.
        EngineError: the engine failed; nothing was applied.
    """
    engine, keys = memory.engine, memory.keys
    records = RecordStore(engine, memory.scope)
    for _ in range(APPLY_ATTEMPTS):
        retire = list(plan.retire)
        raws = engine.mget([keys.entry(i) for i in retire]) if retire else []
        vectors = engine.hmget(keys.vectors, retire) if retire else []
        present = [(i, r, v) for i, r, v in zip(retire, raws, vectors, strict=True) if r is not None]
        vanished = tuple(i for i, r in zip(retire, raws, strict=True) if r is None)
        basis = {e.id: e for e in plan.basis}
        changed = [i for i, r, _ in present if i in basis and from_json(r) != basis[i]]
        if changed:
            raise Conflict(
                f"scope {memory.scope!r}: {', '.join(changed[:5])} changed since the {plan.kind} plan was "
                "made; nothing applied (run the pass again)"
            )
        effective = Plan(
            plan.kind, tuple(i for i, _, _ in present), plan.create, plan.unknown + vanished, plan.dropped
        )
        check_plan(effective, len(memory), force=force)
        sources = {e.id: e.subject for e in plan.basis} | {i: from_json(r).subject for i, r, _ in present}
        made = [owned_by(n.entry, n.source_ids, sources) for n in plan.create]
        record = DreamRecord(
            id=new_record_id(),
            scope=memory.scope,
            kind=plan.kind,
            status="dry-run" if dry_run else "applied",
            at=engine.clock.now(),
            model=model,
            prompt_digest=prompt_digest,
            retired=tuple(ArchivedEntry(r, v) for _, r, v in present),
            created=tuple(
                CreatedEntry(to_json(e), n.source_ids) for e, n in zip(made, plan.create, strict=True)
            ),
            unknown=effective.unknown,
            dropped=plan.dropped,
        )
        if dry_run:
            return record
        retired_ids = {i for i, _, _ in present}
        batch = engine.batch()
        for entry_id, raw, _ in present:
            batch.require_equal(keys.entry(entry_id), raw)
        for new in plan.create:
            if new.entry.id not in retired_ids:
                batch.require_missing(keys.entry(new.entry.id))
        for entry_id, _, _ in present:
            batch.delete(keys.entry(entry_id))
            batch.srem(keys.ids, entry_id)
            batch.hdel(keys.vectors, entry_id)
            log_change(batch, keys, "del", entry_id)
        for entry, created in zip(made, record.created, strict=True):
            register(engine, batch, entry.subject, "long_term", memory.scope, entry.id)
            batch.set(keys.entry(entry.id), created.raw)
            batch.sadd(keys.ids, entry.id)
            log_change(batch, keys, "put", entry.id)
        records.write(batch, record, retention)
        if batch.execute().applied:
            records.prune()  # a write path: expired records leave the history index here
            for new in plan.create:
                memory.embed_later(new.entry.id, document_text(new.entry))
            return record
    raise Conflict(f"scope {memory.scope!r}: changed under the {plan.kind} pass {APPLY_ATTEMPTS} times")


def skip_record(
    memory: LongTermMemory,
    kind: str,
    status: str,
    reason: str,
    *,
    model: str | None,
    prompt_digest: str | None,
    retention: float,
) -> DreamRecord:
    """Store (and return) the record of a pass that changed nothing: ``skipped`` or ``refused``."""
    record = DreamRecord(
        id=new_record_id(),
        scope=memory.scope,
        kind=kind,
        status=status,
        at=memory.engine.clock.now(),
        model=model,
        prompt_digest=prompt_digest,
        reason=reason,
    )
    batch = memory.engine.batch()
    records = RecordStore(memory.engine, memory.scope)
    records.write(batch, record, retention)
    batch.execute()
    records.prune()  # a write path: expired records leave the history index here
    return record
