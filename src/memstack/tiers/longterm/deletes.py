"""The deletions of a long-term scope: one entry, many, or those a subject owns.

A mixin of :class:`~memstack.tiers.longterm.store.LongTermMemory`, kept apart so that each file holds one
concept. A deleted entry leaves nothing behind: its vector, its expiry and its history go in the
same batch (:func:`memstack.tiers.longterm.writes.drop`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Final

from ...engines import Engine
from ...foundation.errors import Conflict
from ...foundation.keyspace import family_of, label_of
from ...foundation.limits import short_repr
from . import writes
from .entry import from_json, on_grid
from .layout import PREFIX, ScopeKeys
from .snapshotter import snapshotter
from .validate import normalise_id

__all__ = ["DELETE_ATTEMPTS", "DELETE_CHUNK", "LongTermDeletes", "expiring_scopes"]

DELETE_ATTEMPTS: Final = 16
"""Optimistic retries of one chunk racing other writers of the same ids."""
DELETE_CHUNK: Final = 500
"""Entries :meth:`LongTermDeletes.delete_many` removes per engine batch."""


class LongTermDeletes:
    """``delete``, ``delete_many``, ``delete_owned`` and ``sweep_expired`` of one scope."""

    engine: Engine
    scope: str
    keys: ScopeKeys

    def delete(self, id: str) -> bool:  # noqa: A002 - the field is called id everywhere in RockBot
        """Delete a memory with its vector and history; False when the id is unknown.

        Raises:
            InvalidKey: a malformed id.
        """
        entry_id = normalise_id(id)
        batch = self.engine.batch()
        batch.require_exists(self.keys.entry(entry_id))
        writes.drop(batch, self.keys, [entry_id])
        # The snapshots may hold the entry's terms and vector: they go with the entry, and the counter keeps a
        # snapshot taken before this deletion from landing after it (longterm/snapshot.py).
        batch.delete(self.keys.snapshot, self.keys.snapshot_version, self.keys.ann)
        batch.incr(self.keys.deletions)
        if not batch.execute().applied:
            return False
        snapshotter(self.engine, self.scope).touch()
        return True

    def delete_many(self, ids: Iterable[str]) -> int:
        """Delete several memories (with their vectors and histories) in one batch per
        :data:`DELETE_CHUNK` ids (a forget of a user's entries is a few engine calls, not one per
        entry); returns how many existed. Each batch is guarded by the existence of the ids it
        found, so a concurrent delete of one of them makes it read again rather than count it twice.

        Raises:
            InvalidKey: a malformed id (nothing is deleted then).
            Conflict: the ids kept changing under concurrent writers.
        """
        wanted = sorted({normalise_id(i) for i in ids})
        removed = 0
        for start in range(0, len(wanted), DELETE_CHUNK):
            removed += len(self._delete_chunk(wanted[start : start + DELETE_CHUNK])[0])
        return removed

    def delete_owned(self, ids: Iterable[str], subject: str) -> tuple[list[str], list[str]]:
        """Delete those of ``ids`` whose current version is labelled ``subject`` (see
        :meth:`delete_many`); a version someone else saved over it stays. Returns ``(removed,
        kept)``: the ids deleted, and the ids whose stored version is not the subject's.

        Each batch is guarded by the versions read, so a save landing in between is never deleted
        on the strength of a label it does not carry (the batch reads again).

        Raises:
            InvalidKey: a malformed id (nothing is deleted then).
            Conflict: the ids kept changing under concurrent writers.
        """
        wanted = sorted({normalise_id(i) for i in ids})
        removed: list[str] = []
        kept: list[str] = []
        for start in range(0, len(wanted), DELETE_CHUNK):
            gone, stayed = self._delete_chunk(
                wanted[start : start + DELETE_CHUNK], lambda raw: label_of(json.loads(raw)) == subject
            )
            removed += gone
            kept += stayed
        return removed, kept

    def sweep_expired(self, limit: int = DELETE_CHUNK) -> int:
        """Delete up to ``limit`` entries whose ``expires_at`` has passed (searches hide them from
        that moment; this removes them, with their histories); returns how many. The retention
        sweep (:func:`memstack.services.lifecycle.retention.sweep`) calls it for every scope.

        Raises:
            Conflict: the entries kept changing under concurrent writers.
        """
        now = on_grid(self.engine.clock.now())  # the stored times' grid: exactly at expiry is due
        due = [m for m, _ in self.engine.zrangebyscore(self.keys.expiry, -math.inf, now, count=limit)]
        if not due:
            return 0
        gone, _ = self._delete_chunk(due, lambda raw: _expired(raw, now))
        stale = [i for i in due if i not in gone and not self.engine.exists(self.keys.entry(i))]
        if stale:  # an index member whose entry is gone (never left by a write of this module)
            self.engine.zrem(self.keys.expiry, *stale)
        return len(gone)

    def _delete_chunk(
        self, ids: list[str], owned: Callable[[str], bool] | None = None
    ) -> tuple[list[str], list[str]]:
        for _ in range(DELETE_ATTEMPTS):
            found = self.engine.mget([self.keys.entry(i) for i in ids])
            stored = {i: raw for i, raw in zip(ids, found, strict=True) if raw is not None}
            present = [i for i, raw in stored.items() if owned is None or owned(raw)]
            others = [i for i in stored if i not in present]
            if not present:
                return [], others
            batch = self.engine.batch()
            for entry_id in present:
                batch.require_equal(self.keys.entry(entry_id), stored[entry_id])
            writes.drop(batch, self.keys, present)
            batch.delete(self.keys.snapshot, self.keys.snapshot_version, self.keys.ann)  # as delete() does
            batch.incr(self.keys.deletions)
            if batch.execute().applied:
                snapshotter(self.engine, self.scope).touch()
                return present, others
        raise Conflict(f"scope {short_repr(self.scope)}: entries kept changing; delete abandoned")


def _expired(raw: str, now: float) -> bool:
    expires = from_json(raw).expires_at
    return expires is not None and expires.timestamp() <= now


def expiring_scopes(engine: Engine) -> list[str]:
    """The scopes of ``engine`` holding entries that expire, sorted (reads keys only)."""
    found = set()
    for key in engine.scan(PREFIX):
        family = family_of(key)[1]
        if family is not None and family[0].name == "long_term.expiry":
            found.add(family[1]["scope"])
    return sorted(found)
