"""What the long-term tier forgets: a whole scope, a session's injection record, a subject's entry
versions, and the injection records' references to entries that are gone (see
:mod:`memstack.services.lifecycle.plans`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from typing import Final

from ...engines import Engine
from ...engines.bulk import BATCH_KEYS, delete_keys, guarded_sweep
from ...foundation.errors import Conflict
from ...foundation.keyspace import family_named, label_of
from ...foundation.limits import short_repr
from . import history
from .layout import ScopeKeys, injected_key
from .store import LongTermMemory
from .validate import SCOPE_RULE, SESSION_RULE

__all__ = [
    "FORGETS",
    "LEFTOVERS",
    "MAX_ROUNDS",
    "forget_history",
    "forget_injected",
    "forget_owned",
    "forget_scope",
    "owned_left",
    "tracked",
    "untrack",
]

MAX_ROUNDS: Final = 20
"""Rounds a step makes while writers keep adding entries, before it gives up (Conflict)."""
_INJECTED_LEAD: Final = family_named("long_term.injected").stem.lead

Counts = dict[str, int]


def _trackers(engine: Engine) -> list[str]:
    return sorted(engine.scan(_INJECTED_LEAD))


def untrack(engine: Engine, ids: Sequence[str]) -> int:
    """Remove ``ids`` from every session's injection record; returns how many references went."""
    if not ids:
        return 0
    removed = 0
    for key in _trackers(engine):
        for start in range(0, len(ids), BATCH_KEYS):
            removed += int(engine.srem(key, *ids[start : start + BATCH_KEYS]))
    return removed


def tracked(engine: Engine, ids: Iterable[str]) -> int:
    """References to ``ids`` still in injection records."""
    wanted = set(ids)
    if not wanted:
        return 0
    return sum(1 for key in _trackers(engine) for i in engine.smembers(key) if i in wanted)


def forget_scope(engine: Engine, scope: str) -> Counts:
    """Entries leave with their id-set member and vector in one batch each (never a half-object,
    even next to writers); the index keys go last, only once the id set is empty.

    Raises:
        Conflict: writers kept adding entries for :data:`MAX_ROUNDS` rounds (run it again).
    """
    if not SCOPE_RULE.fullmatch(scope):
        return {}
    keys = ScopeKeys.of(engine, scope)
    removed = untracked = 0
    for _ in range(MAX_ROUNDS):
        ids = sorted(engine.smembers(keys.ids))
        untracked += untrack(engine, ids)  # first: while the ids exist, a re-run finds them again
        # every process's cache rebuilds instead of serving what goes; no snapshot keeps its terms
        engine.delete(keys.epoch, keys.snapshot, keys.snapshot_version, keys.ann)
        for start in range(0, len(ids), BATCH_KEYS):
            chunk = ids[start : start + BATCH_KEYS]
            with engine.batch() as batch:
                batch.delete(*[keys.entry(i) for i in chunk])
                batch.delete(*[keys.history(i) for i in chunk])
                batch.srem(keys.ids, *chunk)
                batch.hdel(keys.vectors, *chunk)
            assert batch.result is not None
            removed += int(batch.result.results[0])
        last = (
            keys.epoch,
            keys.vectors,
            keys.version,
            keys.log,
            keys.snapshot,
            keys.snapshot_version,
            keys.ann,
        )
        # entries nobody indexes any more, and the histories of entries retired into an archive
        orphans = sorted(engine.scan(keys.entry_prefix)) + sorted(engine.scan(keys.history_prefix))
        done, count = guarded_sweep(engine, keys.ids, orphans, (*last, keys.expiry, keys.deletions))
        removed += count
        if done:
            return {"long_term": removed, "subject_index": untracked}
    raise Conflict(f"scope {short_repr(scope)}: writers kept adding entries; forget it again")


def scope_leftovers(engine: Engine, scope: str) -> int:
    """Keys of the scope still stored."""
    if not SCOPE_RULE.fullmatch(scope):
        return 0
    return sum(1 for _ in engine.scan(ScopeKeys.of(engine, scope).base))


def forget_injected(engine: Engine, session_id: str) -> Counts:
    """The session's record of injected memories."""
    if not SESSION_RULE.fullmatch(session_id):
        return {}
    return {"subject_index": delete_keys(engine, [injected_key(engine, session_id)])}


def injected_leftovers(engine: Engine, session_id: str) -> int:
    """1 while the session's injection record is stored."""
    return int(
        SESSION_RULE.fullmatch(session_id) is not None and engine.exists(injected_key(engine, session_id))
    )


def renew_log(engine: Engine, keys: ScopeKeys) -> None:
    """Drop the scope's change log (its lines name the ids a forget removed) and start a new epoch:
    every process's cache of the scope rebuilds, so none needed the lines dropped."""
    with engine.batch() as batch:
        batch.delete(keys.log)
        batch.set(keys.epoch, uuid.uuid4().hex)


def forget_owned(engine: Engine, subject: str, scope: str, ids: Sequence[str]) -> tuple[Counts, list[str]]:
    """The entries of ``scope`` among ``ids`` whose current version is the subject's, and every
    reference to the subject's ids (injection records, the change log's lines); returns the counts
    and the ids removed."""
    memories = LongTermMemory(engine, scope)
    removed, others = memories.delete_owned(ids, subject)
    if removed:
        renew_log(engine, memories.keys)
    # the histories of what stays (someone else's current version, a retired entry) lose what
    # the subject wrote
    # (counted as part of their entries: the report counts entries)
    forget_history(engine, memories.keys, subject, sorted(set(ids) - set(removed)))
    # references to the subject's ids go, those retired by a dream pass too; an id someone else
    # wrote over stays theirs
    gone = sorted(set(ids) - set(others))
    return {"long_term": len(removed), "subject_index": untrack(engine, gone)}, removed


def forget_history(engine: Engine, keys: ScopeKeys, subject: str, ids: Sequence[str]) -> int:
    """Rewrite the histories of ``ids`` without what ``subject`` wrote
    (:func:`memstack.tiers.longterm.history.without_subject`), keeping a retired entry's history TTL;
    returns how many items went. Each rewrite is guarded by the entry as read: every history
    item is written with a change of its entry, so an unchanged entry means an unchanged history.

    Raises:
        Conflict: an entry kept changing for :data:`MAX_ROUNDS` rounds (run it again).
    """
    removed = 0
    for entry_id in ids:
        for _ in range(MAX_ROUNDS):
            with engine.batch() as read:
                read.get(keys.entry(entry_id))
                read.lrange(keys.history(entry_id), 0, -1)
                read.pttl(keys.history(entry_id))
            assert read.result is not None
            raw, items, ttl = read.result.results
            if not history.holds(items, subject):
                break
            kept = history.without_subject(items, subject)
            batch = engine.batch()
            batch.require_equal(keys.entry(entry_id), raw)
            batch.delete(keys.history(entry_id))
            if kept:
                batch.rpush(keys.history(entry_id), *kept)
                if ttl > 0:
                    batch.pexpire(keys.history(entry_id), ttl)
            if batch.execute().applied:
                removed += len(items) - len(kept)
                break
        else:
            raise Conflict(f"memory {short_repr(entry_id)}: kept changing; forget the subject again")
    return removed


def owned_left(engine: Engine, subject: str, scope: str, ids: Sequence[str]) -> int:
    """Entries of ``scope`` among ``ids`` still holding a version labelled ``subject``, in their
    current version or in their history."""
    keys = ScopeKeys.of(engine, scope)
    if not ids:
        return 0
    raws = engine.mget([keys.entry(i) for i in ids])
    left = sum(1 for raw in raws if raw is not None and label_of(json.loads(raw)) == subject)
    with engine.batch() as batch:
        for entry_id in ids:
            batch.lrange(keys.history(entry_id), 0, -1)
    assert batch.result is not None
    return left + sum(1 for items in batch.result.results if history.holds(items, subject))


FORGETS: Final = {"scope": (forget_scope,), "session": (forget_injected,)}
"""The selectors this tier forgets, with its steps for each."""
LEFTOVERS: Final = {"scope": scope_leftovers, "session": injected_leftovers}
"""What the verification asks this tier, per selector."""
