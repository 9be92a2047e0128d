"""Applying a plan: the pass's changes, its record, its archive and the history of every entry it
touches in ONE atomic batch.

The batch is guarded by the stored JSON of every entry it retires or supersedes (and the absence
of every new id), so a concurrent write makes it change nothing; it is then re-read and retried.
After a crash the pass is either fully applied with its record, or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Final

from ...engines.base import Batch
from ...foundation.errors import Conflict
from ...tiers.longterm import LongTermMemory, MemoryEntry, writes
from ...tiers.longterm.entry import from_json, to_json
from ...tiers.longterm.layout import ScopeKeys
from ...tiers.longterm.layout import log_change as layout_log_change
from ...tiers.longterm.query import document_text
from .plan import NewEntry, Plan, check_plan
from .record import ArchivedEntry, CreatedEntry, DreamRecord, RecordStore, SupersededEntry, new_record_id

__all__ = ["APPLY_ATTEMPTS", "apply_plan", "log_change", "owned_by", "skip_record"]

APPLY_ATTEMPTS: Final = 8
"""Optimistic retries of one pass racing other writers of the scope."""


def log_change(batch: Batch, keys: ScopeKeys, op: str, entry_id: str) -> None:
    """Queue the long-term change-log entry that keeps every process's search cache fresh."""
    layout_log_change(batch, keys, op, entry_id)


def owned_by(entry: MemoryEntry, source_ids: tuple[str, ...], sources: dict[str, str | None]) -> MemoryEntry:
    """``entry`` labelled with the subject of its sources when they all have the same one (what
    is only about one person stays theirs); unlabelled otherwise. Without sources it keeps its own
    label (the extract pass labels what it learnt with the subject of the turns it came from)."""
    if not source_ids:
        return entry
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
    also: Callable[[Batch], None] | None = None,
) -> DreamRecord:
    """Apply ``plan`` to ``memory``'s scope with its record; ``dry_run`` only checks and describes it.
    ``also`` queues more guards and writes of the pass on its batch (the extract pass's cursor),
    its guards first.

    Ids of ``plan.retire`` (or superseded) deleted meanwhile are reported as unknown. Every change
    adds an item to the entry's history with the actor ``dream:{record id}``: a created entry
    (related: its sources), a superseded one (related: the entry superseding it) and a retired one
    (its history then lasts as long as the record).

    Raises:
        DreamRefused: a guard rail (see :func:`~memstack.services.dream.plan.check_plan`) and not ``force``.
        Conflict: an entry to retire or supersede changed since the plan was made (see
            ``Plan.basis``), or the scope kept changing under the pass.
        EngineError: the engine failed; nothing was applied.
    """
    engine = memory.engine
    records = RecordStore(engine, memory.scope)
    for _ in range(APPLY_ATTEMPTS):
        stored, present, vanished = _touched(memory, plan)
        create = tuple(
            replace(n, supersedes=tuple(i for i in n.supersedes if i in stored)) for n in plan.create
        )
        effective = Plan(
            plan.kind, tuple(i for i, _, _ in present), create, plan.unknown + vanished, plan.dropped
        )
        check_plan(effective, memory.current_count(), force=force)
        at = engine.clock.now()
        made, closed = _changes(plan, create, stored, datetime.fromtimestamp(at, UTC))
        record = DreamRecord(
            id=new_record_id(),
            scope=memory.scope,
            kind=plan.kind,
            status="dry-run" if dry_run else "applied",
            at=at,
            model=model,
            prompt_digest=prompt_digest,
            retired=tuple(ArchivedEntry(r, v) for _, r, v in present),
            created=tuple(
                CreatedEntry(to_json(e), n.source_ids, n.message_ids)
                for e, n in zip(made, create, strict=True)
            ),
            unknown=effective.unknown,
            dropped=plan.dropped,
            superseded=tuple(SupersededEntry(before, to_json(after)) for _, before, after in closed),
        )
        if dry_run:
            return record
        if _write(memory, record, present, made, create, closed, retention, at, also):
            records.prune()  # a write path: expired records leave the history index here
            for new in create:
                memory.embed_later(new.entry.id, document_text(new.entry))
            return record
    raise Conflict(f"scope {memory.scope!r}: changed under the {plan.kind} pass {APPLY_ATTEMPTS} times")


def _touched(
    memory: LongTermMemory, plan: Plan
) -> tuple[dict[str, str], list[tuple[str, str, Any]], tuple[str, ...]]:
    """What the plan retires or supersedes as stored now: the stored JSON by id, the entries to
    retire with their vectors, and the ids gone meanwhile.

    Raises:
        Conflict: an entry changed since the plan was made (see ``Plan.basis``).
    """
    engine, keys = memory.engine, memory.keys
    touched = [*plan.retire, *plan.superseded]
    found = engine.mget([keys.entry(i) for i in touched]) if touched else []
    stored = {i: raw for i, raw in zip(touched, found, strict=True) if raw is not None}
    vectors = engine.hmget(keys.vectors, list(plan.retire)) if plan.retire else []
    present = [(i, stored[i], v) for i, v in zip(plan.retire, vectors, strict=True) if i in stored]
    vanished = tuple(i for i in touched if i not in stored)
    basis = {e.id: e for e in plan.basis}
    changed = [i for i, raw in stored.items() if i in basis and from_json(raw) != basis[i]]
    if changed:
        raise Conflict(
            f"scope {memory.scope!r}: {', '.join(changed[:5])} changed since the {plan.kind} plan was "
            "made; nothing applied (run the pass again)"
        )
    return stored, present, vanished


def _changes(
    plan: Plan, create: tuple[NewEntry, ...], stored: dict[str, str], now: datetime
) -> tuple[list[MemoryEntry], list[tuple[str, str, MemoryEntry]]]:
    """The entries to create (each owned by its sources' subject) and the stored entries they
    supersede, each as its id, its stored JSON and its closed version."""
    sources = {e.id: e.subject for e in plan.basis} | {i: from_json(r).subject for i, r in stored.items()}
    made = [owned_by(n.entry, n.source_ids, sources) for n in create]
    closed = [
        (i, stored[i], _superseded(from_json(stored[i]), entry, now))
        for entry, n in zip(made, create, strict=True)
        for i in n.supersedes
    ]
    return made, closed


def _superseded(old: MemoryEntry, new: MemoryEntry, now: datetime) -> MemoryEntry:
    """``old`` closed by ``new``: valid until ``new`` became valid (never before ``old`` did)."""
    return replace(old, valid_to=max(new.valid_from, old.valid_from), superseded_by=new.id, updated_at=now)


def _write(
    memory: LongTermMemory,
    record: DreamRecord,
    present: list[tuple[str, str, str | None]],
    made: list[MemoryEntry],
    create: tuple[NewEntry, ...],
    closed: list[tuple[str, str, MemoryEntry]],
    retention: float,
    at: float,
    also: Callable[[Batch], None] | None,
) -> bool:
    """The pass's one batch: guards, retirements, creations, supersessions, the record."""
    engine, keys, actor = memory.engine, memory.keys, record.actor
    retired_ids = {i for i, _, _ in present}
    batch = engine.batch()
    for entry_id, raw, _ in present:
        batch.require_equal(keys.entry(entry_id), raw)
    for entry_id, raw, _ in closed:
        batch.require_equal(keys.entry(entry_id), raw)
    for new in create:
        if new.entry.id not in retired_ids:
            batch.require_missing(keys.entry(new.entry.id))
    if also is not None:  # after the pass's guards (its own guards first), before any write
        also(batch)
    rewritten = {e.id: c.raw for e, c in zip(made, record.created, strict=True) if e.id in retired_ids}
    successors = {s: n.entry.id for n in create for s in n.source_ids}
    keep_ms = max(1, int(retention * 1000))
    for entry_id, raw, _ in present:
        if entry_id in rewritten:  # rewritten in place (dedupe's survivor): one update, no retirement
            batch.hdel(keys.vectors, entry_id)
            continue
        related = () if entry_id not in successors else (successors[entry_id],)
        writes.retire(batch, keys, entry_id, raw, actor=actor, at=at, keep_ms=keep_ms, related=related)
    old_raws = {i: r for i, r, _ in present}
    for entry, created, new in zip(made, record.created, create, strict=True):
        old = old_raws.get(entry.id) if entry.id in rewritten else None
        op = "create" if old is None else "update"
        writes.put(
            engine, batch, keys, memory.scope, entry, created.raw,
            old_raw=old, op=op, actor=actor, at=at, related=new.source_ids,
        )  # fmt: skip
    for (entry_id, before, after), superseded in zip(closed, record.superseded, strict=True):
        writes.put(
            engine, batch, keys, memory.scope, after, superseded.after,
            old_raw=before, op="supersede", actor=actor, at=at, related=(after.superseded_by or entry_id,),
        )  # fmt: skip
    RecordStore(engine, memory.scope).write(batch, record, retention)
    return bool(batch.execute().applied)


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
