"""Bounded, resumable key deletion: the one primitive every forget step is built on.

Keys go in batches of at most :data:`BATCH_KEYS`; each batch is atomic. A step names its *index*
keys (the sets, counters and epochs through which readers find the data) so they go in the first
batch: from then on no reader reaches the rest, and a crash leaves only unreachable orphans under
the same prefix, which the next run's scan finds and removes. On a Redis Cluster a batch must stay
in one hash slot, so keys are grouped by their hash tag first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from ..engines import Engine

__all__ = ["BATCH_KEYS", "delete_keys", "delete_prefix"]

BATCH_KEYS: Final = 500
"""Keys per deletion batch: large forgets never hold the engine in one long write."""

_TAG: Final = re.compile(r"\{([^{}]*)\}")


def _slot_groups(keys: Iterable[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for key in keys:
        match = _TAG.search(key)
        groups.setdefault(match.group(1) if match else key, []).append(key)
    return groups


def delete_keys(engine: Engine, keys: Sequence[str]) -> int:
    """Delete ``keys`` (in order, bounded batches, grouped by hash slot); returns how many existed."""
    removed = 0
    groups = _slot_groups(keys) if engine.clustered else {"": list(keys)}
    for group in groups.values():
        for start in range(0, len(group), BATCH_KEYS):
            removed += int(engine.delete(*group[start : start + BATCH_KEYS]))
    return removed


def delete_prefix(engine: Engine, prefix: str, index: Sequence[str] = ()) -> int:
    """Delete ``index`` keys first (one batch), then every key under ``prefix``; returns the count.

    Run again after a crash, it finishes the job (the scan finds what is left).
    """
    removed = delete_keys(engine, list(index)) if index else 0
    rest = sorted(engine.scan(prefix))
    return removed + delete_keys(engine, rest)
