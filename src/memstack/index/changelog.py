"""The change log every engine-stored entry set keeps, and reading it since a version.

Long-term scopes, LangGraph namespaces, semantic caches and document stores keep their entries
on the engine, shared by every process, and search an in-process index of them
(:mod:`memstack.index.mirror`). What keeps those indexes fresh is written in the same atomic
batch as each change of the set, under the set's base key::

    {base}ver     string  change counter: +1 per changed id
    {base}log     list    "{op} {id}" per change, the last LOG_MAX kept (the last one is ver's)
    {base}epoch   string  random token: set by the first write after the set was empty or wiped
                          (a read never creates it), replaced by a clear; a new one voids every index
    {base}ids     set     ids of the stored entries

The log line of version ``v`` sits at position ``v - ver + len(log) - 1``.
:func:`changes_since` is *the* way to learn what changed after a version (a process catching up
with writes made by others reads it).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from ..engines import Engine
from ..engines.base import Batch
from ..foundation.keyspace import family_named
from ..foundation.keyspace.families import CHANGE_LOG

__all__ = [
    "LOG_MAX",
    "SLACK",
    "SetKeys",
    "changed_ids",
    "changes_since",
    "log_change",
    "log_changes",
    "record",
    "renew",
    "restart",
]

LOG_MAX: Final = 1000
"""Changes kept in a log; an index further behind rebuilds."""
SLACK: Final = 64
"""Extra log lines read past the ones known to be missing: writes landing between the two reads."""


_VERSION: Final = CHANGE_LOG["version"]
_LOG: Final = CHANGE_LOG["log"]
_EPOCH: Final = CHANGE_LOG["epoch"]
_IDS: Final = CHANGE_LOG["ids"]
_VECTORS: Final = family_named("long_term.vectors").tail
"""The tail of a set's vector hash (long-term scopes and LangGraph namespaces spell it alike)."""


@dataclass(frozen=True, slots=True)
class SetKeys:
    """The change-log keys under ``base`` (their tails from the keyspace registry's change-log
    families) and entries at ``{base}{infix}{id}``."""

    base: str
    infix: str = "e:"
    version: str = field(init=False, repr=False, compare=False)
    log: str = field(init=False, repr=False, compare=False)
    epoch: str = field(init=False, repr=False, compare=False)
    ids: str = field(init=False, repr=False, compare=False)
    vectors: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tails = {"version": _VERSION, "log": _LOG, "epoch": _EPOCH, "ids": _IDS, "vectors": _VECTORS}
        for name, tail in tails.items():
            object.__setattr__(self, name, self.base + tail)  # frozen: built once, here

    def entry(self, entry_id: str) -> str:
        return self.base + self.infix + entry_id

    def record(self, batch: Batch, op: str, ids: Sequence[str]) -> None:
        """:func:`record` on these keys."""
        record(batch, self, op, ids)

    def restart(self, batch: Batch) -> None:
        """:func:`restart` on these keys."""
        restart(batch, self)

    def renew(self, batch: Batch) -> None:
        """:func:`renew` on these keys."""
        renew(batch, self)


def log_changes(batch: Batch, keys: SetKeys, op: str, entry_ids: Sequence[str]) -> None:
    """:func:`log_change` for many ids in one batch, in four commands whatever their number (a bulk
    write): the version moves by one per line, as it does line by line."""
    if not entry_ids:
        return
    batch.set(keys.epoch, uuid.uuid4().hex, nx=True)
    batch.incr(keys.version, len(entry_ids))
    batch.rpush(keys.log, *(f"{op} {entry_id}" for entry_id in entry_ids))
    batch.ltrim(keys.log, -LOG_MAX, -1)


def log_change(
    batch: Batch,
    keys: SetKeys,
    op: str,
    entry_id: str,
    epoch: str | None = None,
    *,
    known: bool = False,
    after: int | None = None,
) -> None:
    """Queue, in a write's own batch, one change of ``entry_id`` (``op``: ``put``, ``del``, ``vec``...):
    the epoch (created here if the set had none, never by a read), the version and the log line.
    ``epoch`` is the value a new epoch gets (default: random), for a writer that must know it;
    ``known``: the batch is guarded by the epoch being there (it is not set again).
    ``after``: the version the batch is guarded to find. The log never holds more lines than the
    version counts (each line comes with its +1), so while this change's version stays within
    :data:`LOG_MAX` the log cannot pass it and is not trimmed (one op fewer on a young set).
    The ids set is the writer's to keep (see :func:`record`)."""
    if not known:
        batch.set(keys.epoch, epoch or uuid.uuid4().hex, nx=True)
    batch.incr(keys.version)
    batch.rpush(keys.log, f"{op} {entry_id}")
    if after is None or after + 1 > LOG_MAX:
        batch.ltrim(keys.log, -LOG_MAX, -1)


def record(batch: Batch, keys: SetKeys, op: str, ids: Sequence[str]) -> None:
    """Queue ``op`` (``put`` adds to the ids set, anything else removes) of ``ids``, counted and logged."""
    if not ids:
        return
    if op == "put":
        batch.sadd(keys.ids, *ids)
    else:
        batch.srem(keys.ids, *ids)
    batch.set(keys.epoch, uuid.uuid4().hex, nx=True)
    batch.incr(keys.version, len(ids))
    batch.rpush(keys.log, *(f"{op} {i}" for i in ids))
    batch.ltrim(keys.log, -LOG_MAX, -1)


def restart(batch: Batch, keys: SetKeys) -> None:
    """Queue forgetting every id and starting a new epoch (every index rebuilds)."""
    batch.delete(keys.ids, keys.log)
    batch.set(keys.epoch, uuid.uuid4().hex)


def renew(batch: Batch, keys: SetKeys) -> None:
    """Queue dropping the log (after a forget it names the forgotten ids) and starting a new epoch,
    the ids kept: every index rebuilds from them, so none needed the lines dropped."""
    batch.delete(keys.log)
    batch.set(keys.epoch, uuid.uuid4().hex)


def changed_ids(cached: int, version: int, log: Sequence[str]) -> set[str] | None:
    """Ids changed after version ``cached``, given the log's tail ending at ``version`` (None:
    the tail does not reach back that far, or the version went back: rebuild)."""
    missing = version - cached
    if missing < 0:
        # Versions only grow while a set lives: a lower one means it was forgotten (its version
        # and log dropped) while the epoch read the same, e.g. absent before and after the forget
        # (tests/services/lifecycle/test_forget_concurrent.py).
        return None
    if missing == 0:
        return set()
    if missing > len(log):
        return None
    return {line.split(" ", 1)[1] for line in log[len(log) - missing :] if " " in line}


def changes_since(
    engine: Engine, keys: SetKeys, since: int, seen: int | None = None
) -> tuple[int, set[str] | None]:
    """``(version now, ids changed after version since)``, the ids None when the log no longer
    reaches back that far (then read the whole set again); one engine call. ``seen``, a version
    read just before, lets it read only the log's tail.

    Raises:
        EngineError: the engine failed.
    """
    tail = LOG_MAX if seen is None else min(LOG_MAX, max(0, seen - since) + SLACK)
    batch = engine.batch()
    batch.get(keys.version)
    batch.lrange(keys.log, -tail, -1)
    result = batch.execute()
    version = int(result[0] or 0)
    return version, changed_ids(since, version, result[1])
