"""In-process mirrors of engine-stored entry sets, kept fresh by a change counter.

The semantic cache and the document store keep their entries on the engine (shared by every
process) and search an in-process index of them. A :class:`ChangeLog` is written in the same
atomic batch as every change of the set::

    {base}ver     string  change counter: +1 per changed id
    {base}log     list    the last LOG_MAX changes, "put {id}" / "del {id}" (the last one is ver's)
    {base}epoch   string  random id; replaced by a clear, gone after an engine flush
    {base}ids     set     ids of the stored entries

A :class:`Mirror` reads ``ver`` and ``epoch`` in one call per search. Same epoch and version:
fresh. Same epoch, newer version: only the ids logged since are re-read. A new epoch, or a log
that no longer reaches back, rebuilds from ``ids``. Reading the version before the data keeps this
safe without locks across processes: a later change is logged under a later version.

Entries may expire (engine TTL) without a log record; a reader that finds one gone logs it as
deleted (:meth:`ChangeLog.record`) so every process drops it.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

from ..engines import Engine
from ..engines.base import Batch
from ..keyspace.families import CHANGE_LOG

__all__ = ["LOG_MAX", "ChangeLog", "Mirror", "changed_ids", "mirror_for"]

LOG_MAX: Final = 1000
"""Changes kept in the log; a mirror further behind rebuilds."""
_READ: Final = 500
_SLACK: Final = 64
MAX_MIRRORS: Final = 256
"""Mirrors one process keeps (least recently used dropped first)."""


def changed_ids(cached: int, version: int, log: Sequence[str]) -> set[str] | None:
    """Ids changed after version ``cached`` (None: the log no longer reaches back, rebuild)."""
    missing = version - cached
    if missing <= 0:
        return set()
    if missing > len(log):
        return None
    return {line.split(" ", 1)[1] for line in log[len(log) - missing :] if " " in line}


class ChangeLog:
    """The keys of one entry set under ``base`` and how a batch records a change of it."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.ver = base + CHANGE_LOG["version"]
        self.log = base + CHANGE_LOG["log"]
        self.epoch = base + CHANGE_LOG["epoch"]
        self.ids = base + CHANGE_LOG["ids"]

    def record(self, batch: Batch, op: str, ids: Sequence[str]) -> None:
        """Add to ``batch``: ``op`` ("put"/"del") of ``ids``, counted and logged."""
        if not ids:
            return
        if op == "put":
            batch.sadd(self.ids, *ids)
        else:
            batch.srem(self.ids, *ids)
        batch.incr(self.ver, len(ids))
        batch.rpush(self.log, *(f"{op} {i}" for i in ids))
        batch.ltrim(self.log, -LOG_MAX, -1)

    def restart(self, batch: Batch) -> None:
        """Add to ``batch``: forget every id and start a new epoch (every mirror rebuilds)."""
        batch.delete(self.ids, self.log)
        batch.set(self.epoch, uuid.uuid4().hex)

    def renew(self, batch: Batch) -> None:
        """Add to ``batch``: drop the log (it names the ids of a forget) and start a new epoch, the
        ids kept: every mirror rebuilds from them, so none needed the lines dropped."""
        batch.delete(self.log)
        batch.set(self.epoch, uuid.uuid4().hex)


class Mirror:
    """What one process knows of one entry set, as of ``version`` under ``epoch``.

    Subclasses hold the index and implement :meth:`reset` and :meth:`apply`; the caller holds
    :attr:`lock` around :meth:`refresh` and its use of the index.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.epoch: str | None = None
        self.version = -1

    def reset(self) -> None:
        """Forget every entry."""
        raise NotImplementedError

    def apply(self, entry_id: str, raw: str | None) -> None:
        """Take in the stored text of ``entry_id`` (None: it is gone)."""
        raise NotImplementedError

    def refresh(self, engine: Engine, log: ChangeLog, entry_key: Callable[[str], str]) -> None:
        """Bring the mirror up to the engine's current version (caller holds :attr:`lock`).

        Raises:
            EngineError: the engine failed; the mirror then rebuilds on the next call.
        """
        try:
            self._refresh(engine, log, entry_key)
        except BaseException:
            self.version = -1  # half-applied changes must never pass for a fresh mirror
            raise

    def _refresh(self, engine: Engine, log: ChangeLog, entry_key: Callable[[str], str]) -> None:
        raw_version, epoch = engine.mget([log.ver, log.epoch])
        if epoch is None:
            engine.set(log.epoch, uuid.uuid4().hex, nx=True)
            raw_version, epoch = engine.mget([log.ver, log.epoch])
        version = int(raw_version or 0)
        if epoch == self.epoch and version == self.version:
            return
        if epoch == self.epoch and self.version >= 0:
            # Only the newest lines are needed; the slack covers writes landing in between.
            behind = version - self.version + _SLACK
            with engine.batch() as read:
                read.get(log.ver)
                read.lrange(log.log, -behind, -1)
            assert read.result is not None
            version = int(read.result[0] or 0)
            changed = changed_ids(self.version, version, read.result[1])
            if changed is not None:
                self._read(engine, sorted(changed), entry_key)
                self.version = version
                return
        with engine.batch() as read:
            read.get(log.ver)
            read.smembers(log.ids)
        assert read.result is not None
        self.reset()
        self._read(engine, sorted(read.result[1]), entry_key)
        self.epoch, self.version = epoch, int(read.result[0] or 0)

    def _read(self, engine: Engine, ids: Sequence[str], entry_key: Callable[[str], str]) -> None:
        for start in range(0, len(ids), _READ):
            chunk = ids[start : start + _READ]
            for entry_id, raw in zip(chunk, engine.mget([entry_key(i) for i in chunk]), strict=True):
                self.apply(entry_id, raw)


M = TypeVar("M", bound=Mirror)
_mirrors: OrderedDict[tuple[str, ...], Mirror] = OrderedDict()
_mirrors_lock = threading.Lock()


def mirror_for(key: tuple[str, ...], make: Callable[[], M], kind: type[M]) -> M:
    """The process's mirror under ``key`` (built by ``make`` on first use; LRU-bounded)."""
    with _mirrors_lock:
        found = _mirrors.get(key)
        if not isinstance(found, kind):
            found = make()
            _mirrors[key] = found
        _mirrors.move_to_end(key)
        while len(_mirrors) > MAX_MIRRORS:
            _mirrors.popitem(last=False)
        return found
