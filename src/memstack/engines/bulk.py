"""Bounded, resumable key deletion: the primitive every forget step is built on.

Keys go in batches of at most :data:`BATCH_KEYS`; each batch is atomic. A step names its *index*
keys (the sets, counters and epochs through which readers find the data) so they go in the first
batch: from then on no reader reaches the rest, and a crash leaves only unreachable orphans under
the same prefix, which the next run's scan finds and removes. On a Redis Cluster a batch must stay
in one hash slot, so keys are grouped by their hash tag first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from ..foundation.keyspace.pattern import hash_tag
from .base import Engine, Op

__all__ = ["BATCH_KEYS", "delete_keys", "delete_prefix", "guarded_sweep"]

BATCH_KEYS: Final = 500
"""Keys per deletion batch: large forgets never hold the engine in one long write."""


def _slot_groups(keys: Iterable[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for key in keys:
        tag = hash_tag(key)
        groups.setdefault(key if tag is None else tag, []).append(key)
    return groups


def delete_keys(engine: Engine, keys: Sequence[str]) -> int:
    """Delete ``keys`` (bounded batches grouped by hash slot, sent together: see
    :meth:`Engine.execute_many`); returns how many existed. Batches of one slot go in order, those of
    different nodes in any: a step whose order matters deletes its first keys in a call of their own.
    """
    groups = _slot_groups(keys) if engine.clustered else {"": list(keys)}
    batches: list[list[Op]] = [
        [("delete", tuple(group[start : start + BATCH_KEYS]))]
        for group in groups.values()
        for start in range(0, len(group), BATCH_KEYS)
    ]
    return sum(int(result[0]) for result in engine.execute_many(batches))


def delete_prefix(engine: Engine, prefix: str, index: Sequence[str] = ()) -> int:
    """Delete ``index`` keys first (one batch), then every key under ``prefix``; returns the count.

    Run again after a crash, it finishes the job (the scan finds what is left).
    """
    removed = delete_keys(engine, list(index)) if index else 0
    rest = sorted(engine.scan(prefix))
    return removed + delete_keys(engine, rest)


def guarded_sweep(engine: Engine, index: str, orphans: list[str], last: Sequence[str]) -> tuple[bool, int]:
    """Delete ``orphans`` and then ``last`` in bounded batches, each guarded by ``index`` (a set)
    being gone: while it is, no key under the prefix is reachable, so nothing deleted here can be
    a writer's fresh value. False when a writer re-created the index (go round again); the count
    of keys removed either way."""
    removed = 0
    chunks = [orphans[i : i + BATCH_KEYS] for i in range(0, len(orphans), BATCH_KEYS)] or [[]]
    for n, chunk in enumerate(chunks):
        doomed = [*chunk, *last] if n == len(chunks) - 1 else chunk
        with engine.batch() as batch:
            batch.require_missing(index)
            batch.delete(*doomed)
        assert batch.result is not None
        if not batch.result.applied:
            return False, removed
        removed += int(batch.result.results[-1])
    return True, removed
