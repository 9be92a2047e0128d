"""``Mirror``: what one process knows of one engine-stored entry set, kept fresh by its change log.

A mirror holds, as of ``version`` under ``epoch``, whatever in-process index its owner builds from
the set's entries (a subclass: long-term memory's scope cache, a LangGraph namespace, a semantic
cache's vectors, a document store). :meth:`Mirror.refresh` reads the set's version and epoch (one
call; none when its caller read them, with other things, in one read of its own). Same epoch and
version: fresh. Same epoch, newer version: only the ids logged since
(:func:`~memstack.index.changelog.changes_since`) are read again. A new epoch, or a log that no
longer reaches back, rebuilds from the ids set. Reading the version *before* the data is what keeps
this safe across processes without locks: a change made after the read is logged under a later
version and taken by the next refresh. A refresh never writes.

Entries are read :data:`CHUNK` at a time (with their vectors from the set's ``vec`` hash when the
subclass sets :attr:`Mirror.vector_hash`), so a rebuild of a big set never holds the engine for seconds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import ClassVar, Final, TypeVar

from ..engines import Engine
from ..foundation.errors import InvalidValue
from .changelog import SetKeys, changes_since

__all__ = ["CHUNK", "ENTRY_OVERHEAD", "Mirror", "Row", "Seen", "decoded"]

log = logging.getLogger("memstack.index")
T = TypeVar("T")

CHUNK: Final = 2000
"""Entries read per engine call while (re)building or catching up."""
ENTRY_OVERHEAD: Final = 4
"""An entry held in memory (decoded, indexed) costs about this many times its stored size: the
registry's memory bound (:mod:`memstack.index.registry`) counts with it."""

Row = tuple[str, str | None, str | None]
"""One entry as read: ``(id, stored text or None when gone, vector payload or None)``."""
Seen = tuple[str | None, str | None]
"""A set's version and epoch as stored (None: absent), read before its entries."""


def decoded(decode: Callable[[str], T], raw: str | None, what: str | None = None) -> T | None:
    """``decode(raw)``, or None when ``raw`` is None or not what ``decode`` reads (it raises
    :class:`~memstack.foundation.errors.InvalidValue`); ``what`` names the entry in a warning then (a mirror
    leaves such an entry out of its index)."""
    if raw is None:
        return None
    try:
        return decode(raw)
    except InvalidValue:
        if what is not None:
            log.warning("%s: stored JSON is not what it should be; it is left out of searches", what)
        return None


class Mirror:
    """The in-process image of one entry set; subclasses implement :meth:`reset` and :meth:`take`.

    The caller holds :attr:`lock` around :meth:`refresh` and its use of the index.
    """

    vector_hash: ClassVar[str | None] = None
    """The name of the keys' attribute naming the set's vector hash, when entries have vectors."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.epoch: str | None = None
        self.version = -1
        self.size = 0  # entries held, as the subclass counts them
        self._read_bytes = 0
        self._read_rows = 0

    # -- what a subclass implements -----------------------------------------------------------
    def reset(self) -> None:
        """Forget every entry (a rebuild follows)."""
        raise NotImplementedError

    def take(self, rows: Sequence[Row]) -> None:
        """Take in the current state of ``rows`` (an entry gone has no text)."""
        raise NotImplementedError

    def rebuilt(self, engine: Engine, keys: SetKeys) -> None:
        """Called after a rebuild, before the refresh returns (caller holds :attr:`lock`)."""

    def vector_bytes(self) -> int:
        """Bytes of vectors held (added to the memory estimate)."""
        return 0

    # -- freshness ---------------------------------------------------------------------------
    @property
    def fresh(self) -> bool:
        """True when the last refresh completed (a failed one leaves the mirror to rebuild)."""
        return self.version >= 0

    def refresh(self, engine: Engine, keys: SetKeys, seen: Seen | None = None) -> None:
        """Bring the mirror up to the engine's current version (caller holds :attr:`lock`).
        ``seen``: the set's ``(version, epoch)`` as stored, read by the caller just now (a caller
        checking several sets reads them all in one call); None reads them here.

        Raises:
            EngineError: the engine failed; the mirror then rebuilds on the next call.
        """
        try:
            self._refresh(engine, keys, seen)
        except BaseException:
            self.version = -1  # half-applied changes must never pass for a fresh mirror
            raise

    def _refresh(self, engine: Engine, keys: SetKeys, seen: Seen | None) -> None:
        raw_version, epoch = engine.mget([keys.version, keys.epoch]) if seen is None else seen
        version = int(raw_version or 0)
        if epoch == self.epoch and self.version >= 0:
            if version == self.version:
                return
            version, changed = changes_since(engine, keys, self.version, version)
            if changed is not None:
                self.load(engine, keys, sorted(changed))
                self.version = version
                return
        batch = engine.batch()
        batch.get(keys.version)
        batch.smembers(keys.ids)
        result = batch.execute()
        self.reset()
        self.epoch, self.version = epoch, -1
        self.load(engine, keys, sorted(result[1]))
        self.rebuilt(engine, keys)
        self.version = int(result[0] or 0)

    def load(self, engine: Engine, keys: SetKeys, ids: Sequence[str]) -> None:
        """Read ``ids`` (their entries, and vectors when the set has them) and :meth:`take` them."""
        hash_key = None if self.vector_hash is None else getattr(keys, self.vector_hash)
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            batch = engine.batch()
            batch.mget([keys.entry(i) for i in chunk])
            if hash_key is not None:
                batch.hmget(hash_key, chunk)
            result = batch.execute()
            payloads = result[1] if hash_key is not None else [None] * len(chunk)
            rows = list(zip(chunk, result[0], payloads, strict=True))
            self._read_rows += len(rows)
            self._read_bytes += sum(len(raw) for _, raw, _ in rows if raw is not None)
            self.take(rows)

    # -- memory ------------------------------------------------------------------------------
    def approx_bytes(self) -> int:
        """An estimate of the memory this mirror holds (cheap: no pass over the entries)."""
        mean = self._read_bytes / self._read_rows if self._read_rows else 0.0
        return int(self.size * mean * ENTRY_OVERHEAD) + self.vector_bytes()
