"""Persisted BM25 snapshots of a scope: what lets a new process answer its first search fast.

Building a scope's cache decodes and tokenises every entry (seconds at 200k entries). A snapshot holds
the scope's BM25 index (the ``default`` profile) as arrays (:mod:`memstack.search.bm25_state`), with
the scope's epoch and the version it was taken at. A cold process loads it in one read, replays the
changes logged since that version and answers plain BM25 searches from it while its full cache builds
in the background (:mod:`.cold`). A snapshot older than the change log (:data:`.layout.LOG_MAX`
changes) is not used: the process builds its cache as it would without one.

Only writers write snapshots (a read never writes): :func:`.snapshotter.take`, run by
:class:`.snapshotter.Snapshotter` after writes settle and by :meth:`LongTermMemory.snapshot`. The
write is guarded by the scope's epoch and deletion counter, read before the cache: a snapshot never
lands in another epoch, nor after a deletion it may not reflect, so forgetting an entry never leaves
its terms behind in a snapshot (deleting an entry also deletes the snapshot, in the same batch).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Final

from ...engines import Engine
from ...foundation.errors import InvalidConfiguration, InvalidValue
from ...search import Bm25Index
from ...search.bm25_state import decode_state
from .layout import ScopeKeys

__all__ = ["SNAPSHOT_PROFILE", "Snapshot", "load"]

log = logging.getLogger("memstack.tiers.longterm")

SNAPSHOT_PROFILE: Final = "default"
"""The BM25 profile a snapshot holds (the one every search profile but ``rockbot`` ranks with)."""


@dataclass(slots=True)
class Snapshot:
    """A restored index and what it reflects: the scope's state at ``version`` under ``epoch``."""

    index: Bm25Index
    epoch: str
    version: int
    threads: bool  # the scope holds conversation turns (their context field is not in a snapshot)


def load(engine: Engine, keys: ScopeKeys, epoch: str) -> Snapshot | None:
    """The scope's snapshot if it exists, is intact and belongs to ``epoch``; else None (a damaged
    one is logged and ignored: the caller builds its cache the slow way).

    Raises:
        EngineError: the engine failed.
    """
    raw = engine.get(keys.snapshot)
    if raw is None:
        return None
    try:
        # Engines store text: the bytes travel as the code points 0-255 (decoded as latin-1), which
        # a 200k-entry snapshot turns back into bytes in ~10 ms where base64 took ~150 ms (cold_start_s).
        state, meta = decode_state(raw.encode("latin-1"))
        version, threads = meta.get("version"), meta.get("threads")
        if not isinstance(version, int) or not isinstance(threads, bool):
            raise InvalidValue("BM25 snapshot: bad version or threads")
        if meta.get("epoch") != epoch:
            return None
        return Snapshot(Bm25Index.from_state(state), epoch, version, threads)
    except (UnicodeEncodeError, InvalidValue, InvalidConfiguration) as exc:
        log.warning("%s: ignoring a damaged BM25 snapshot (%s)", keys.snapshot, exc)
        return None
