"""What the dream tier forgets: a scope's records, feedback and lease; a subject's copies in the
records (an archive written by them goes: the record keeps the others' copies, or goes when none
is left); a subject's feedback signals.

The feedback list is rewritten whole, guarded by its change counter (``dream.feedback_version``):
a signal added in between sends the rewrite round again, so none is lost.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Final

from ...engines import Engine
from ...engines.bulk import delete_prefix
from ...foundation.errors import Conflict
from ...foundation.keyspace import label_of
from ...foundation.limits import short_repr
from ...tiers.longterm.validate import SCOPE_RULE
from .keys import DreamKeys
from .record import DreamRecord

__all__ = ["FORGETS", "LEFTOVERS", "forget_feedback", "forget_records", "forget_scope"]

MAX_ROUNDS: Final = 20
Counts = dict[str, int]


def forget_scope(engine: Engine, scope: str) -> Counts:
    """Every dream key of the scope, the history index first."""
    if not SCOPE_RULE.fullmatch(scope):
        return {}
    keys = DreamKeys.of(engine, scope)
    return {"dream": delete_prefix(engine, keys.base, (keys.records,))}


def scope_leftovers(engine: Engine, scope: str) -> int:
    """Dream keys of the scope still stored."""
    return sum(1 for _ in engine.scan(DreamKeys.of(engine, scope).base)) if SCOPE_RULE.fullmatch(scope) else 0


def _theirs(raw: str, subject: str) -> bool:
    return label_of(json.loads(raw)) == subject


def _holds(record: DreamRecord, subject: str) -> bool:
    copies = [a.raw for a in record.retired] + [c.raw for c in record.created]
    copies += [raw for x in record.superseded for raw in (x.before, x.after)]
    return any(_theirs(raw, subject) for raw in copies)


def _without(record: DreamRecord, subject: str) -> DreamRecord:
    """``record`` without the subject's copies (what the others' undo still needs)."""
    return replace(
        record,
        retired=tuple(a for a in record.retired if not _theirs(a.raw, subject)),
        created=tuple(c for c in record.created if not _theirs(c.raw, subject)),
        superseded=tuple(
            x for x in record.superseded if not (_theirs(x.before, subject) or _theirs(x.after, subject))
        ),
    )


def _copies(record: DreamRecord) -> int:
    return len(record.retired) + len(record.created) + len(record.superseded)


def forget_records(engine: Engine, scope: str, subject: str) -> Counts:
    """The copies of versions labelled ``subject`` in the records of ``scope`` (retired or created):
    each record is rewritten without them (its TTL kept), or deleted when nothing else is left.
    Guarded by the record as read: a record changed meanwhile (an undo) is read again."""
    keys = DreamKeys.of(engine, scope)
    removed = 0
    for record_id in [m for m, _ in engine.zrange(keys.records, 0, -1)]:
        for _ in range(MAX_ROUNDS):
            raw = engine.get(keys.record(record_id))
            if raw is None or not _holds(record := DreamRecord.from_json(raw), subject):
                break
            kept = _without(record, subject)
            batch = engine.batch()
            batch.require_equal(keys.record(record_id), raw)
            if kept.retired or kept.created or kept.superseded:
                batch.set(keys.record(record_id), kept.to_json(), keepttl=True)
            else:
                batch.delete(keys.record(record_id))
                batch.zrem(keys.records, record_id)
            if batch.execute().applied:
                removed += _copies(record) - _copies(kept)
                break
        else:
            raise Conflict(f"scope {short_repr(scope)}: record {record_id} kept changing; forget again")
    return {"dream": removed}


def records_leftovers(engine: Engine, scope: str, subject: str) -> int:
    """Records of ``scope`` still holding a version labelled ``subject``."""
    keys = DreamKeys.of(engine, scope)
    ids = [m for m, _ in engine.zrange(keys.records, 0, -1)]
    raws = engine.mget([keys.record(i) for i in ids]) if ids else []
    return sum(1 for raw in raws if raw is not None and _holds(DreamRecord.from_json(raw), subject))


def forget_feedback(engine: Engine, scope: str, subject: str) -> Counts:
    """The feedback signals of ``scope`` labelled ``subject``, the others kept in order.

    Raises:
        Conflict: signals kept arriving for :data:`MAX_ROUNDS` rounds (run it again).
    """
    keys = DreamKeys.of(engine, scope)
    for _ in range(MAX_ROUNDS):
        with engine.batch() as read:
            read.get(keys.feedback_version)
            read.lrange(keys.feedback, 0, -1)
        assert read.result is not None
        version, lines = read.result.results
        kept = [line for line in lines if label_of(json.loads(line)) != subject]
        if len(kept) == len(lines):
            return {"dream": 0}
        batch = engine.batch()
        batch.require_equal(keys.feedback_version, version)
        batch.delete(keys.feedback)
        if kept:
            batch.rpush(keys.feedback, *kept)
        batch.incr(keys.feedback_version)
        if batch.execute().applied:
            return {"dream": len(lines) - len(kept)}
    raise Conflict(f"scope {short_repr(scope)}: feedback kept arriving; forget it again")


def feedback_leftovers(engine: Engine, scope: str, subject: str) -> int:
    """Signals of ``scope`` still labelled ``subject``."""
    lines = engine.lrange(DreamKeys.of(engine, scope).feedback, 0, -1)
    return sum(1 for line in lines if label_of(json.loads(line)) == subject)


FORGETS: Final = {"scope": (forget_scope,)}
"""The selectors this tier forgets, with its steps for each."""
LEFTOVERS: Final = {"scope": scope_leftovers}
"""What the verification asks this tier, per selector."""
