"""Background snapshot writing: after writes to a scope settle, its BM25 snapshot is refreshed.

One :class:`Snapshotter` per (engine, scope) in a process, told of every write made through
:class:`~memstack.tiers.longterm.LongTermMemory`. Its thread waits until no write came for
:data:`QUIET` seconds (at most :data:`MAX_DELAY` after the first unsnapshotted write, so a steady
stream of writes still gets snapshots), then writes a snapshot (:func:`take`) when the scope
holds at least :data:`MIN_ENTRIES` entries (smaller scopes build their cache fast enough) and
:data:`EVERY` changes or more happened since the last one. The thread ends when nothing is pending;
:meth:`~memstack.Memory.close` runs what is pending first (:func:`flush_all`), so a bulk import that
exits right after its last write leaves a snapshot behind.

Costs, measured by bench/search_speed.py: a snapshot of 200k entries is written in well under a
second, and the writing process keeps that scope's cache in memory (as any process that searched it).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from typing import Final

from ...engines import Engine
from ...foundation.errors import EngineClosed
from ...search.bm25_state import encode_state
from . import ann
from .index_cache import scope_cache
from .layout import ScopeKeys
from .snapshot import SNAPSHOT_PROFILE

__all__ = [
    "CATCH_UP",
    "EVERY",
    "IDLE_MAX",
    "MAX_DELAY",
    "MIN_ENTRIES",
    "QUIET",
    "Snapshotter",
    "flush_all",
    "snapshotter",
    "take",
]

log = logging.getLogger("memstack.tiers.longterm")

QUIET = 0.5
"""Seconds without a write before a snapshot is taken."""
MAX_DELAY = 30.0
"""Longest wait, in seconds, after the first change a snapshot does not hold."""
MIN_ENTRIES = 5_000
"""Scopes with fewer entries get no snapshot (tests lower it)."""
EVERY: Final = 200
"""Changes since the last snapshot that make a new one worth its cost (the log replays fewer)."""
IDLE_MAX: Final = 1024
"""Idle snapshotters a process keeps (the least recently used are forgotten)."""
CATCH_UP: Final = 400
"""Writes after which the thread refreshes this process's cache between snapshots (under the
log's 1,000 changes, so a snapshot of a big scope never has to rebuild the cache from scratch)."""


class Snapshotter:
    """Writes one scope's snapshot in the background after writes settle (see the module docstring)."""

    def __init__(self, engine: Engine, scope: str) -> None:
        self.engine, self.scope = engine, scope
        self.keys = ScopeKeys.of(engine, scope)
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._first: float | None = None  # monotonic time of the first pending write
        self._last = 0.0
        self._writes = 0  # since the cache was last brought up to date
        # Writes that cannot make the scope reach MIN_ENTRIES (its size was this far below it): a
        # small scope's writes then cost no thread and no engine call.
        self._headroom = 0
        self._thread: threading.Thread | None = None

    def touch(self) -> None:
        """Note a write (cheap; starts the thread when none runs)."""
        now = time.monotonic()
        with self._lock:
            if self._headroom > 0:  # the scope cannot have reached MIN_ENTRIES yet: nothing to do
                self._headroom -= 1
                return
            self._last = now
            self._writes += 1
            if self._first is None:
                self._first = now
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"memstack snapshots {self.scope}", daemon=True
                )
                self._thread.start()
            elif self._writes >= CATCH_UP:
                self._wake.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Run what is pending now; False if it did not end within ``timeout`` seconds."""
        with self._lock:
            self._first = None if self._first is None else float("-inf")  # due at once
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _run(self) -> None:
        while True:
            with self._lock:
                while self._first is not None and self._writes < CATCH_UP:
                    now = time.monotonic()
                    due = min(self._last + QUIET, self._first + MAX_DELAY)
                    if now >= due:
                        break
                    self._wake.wait(due - now)
                if self._first is None:
                    self._thread = None
                    return
                snapshot_due = time.monotonic() >= min(self._last + QUIET, self._first + MAX_DELAY)
                self._writes = 0
                if snapshot_due:
                    self._first = None
            if snapshot_due:
                self._maybe_take()
            else:
                self._catch_up()

    def _catch_up(self) -> None:
        """Apply the changes so far to this process's cache, if it has one: a snapshot taken later
        then refreshes it from the log instead of rebuilding it (the log keeps 1,000 changes)."""
        try:
            cache = scope_cache(self.engine, self.scope)
            if cache.warm:
                with cache.lock:
                    cache.refresh(self.engine, self.keys)
        except EngineClosed:
            return
        except Exception:  # the snapshot that follows rebuilds the cache if it must
            log.debug("scope %r: refreshing the cache between snapshots failed", self.scope, exc_info=True)

    def _maybe_take(self) -> None:
        try:
            size = self.engine.scard(self.keys.ids)
            if size < MIN_ENTRIES:
                with self._lock:
                    self._headroom = MIN_ENTRIES - size
                return
            version, taken = self.engine.mget([self.keys.version, self.keys.snapshot_version])
            if int(version or 0) - int(taken or -EVERY) >= EVERY:
                take(self.engine, self.scope)
        except EngineClosed:  # closed meanwhile: the process is done with this engine
            return
        except Exception:  # a snapshot only speeds up cold starts; the next write tries again
            log.warning("scope %r: writing the BM25 snapshot failed", self.scope, exc_info=True)

    @property
    def idle(self) -> bool:
        """No thread runs and no write waits for a snapshot."""
        return self._thread is None and self._first is None


_snapshotters: OrderedDict[tuple[str, str], Snapshotter] = OrderedDict()
_registry_lock = threading.Lock()


def snapshotter(engine: Engine, scope: str) -> Snapshotter:
    """The process-wide snapshotter of ``scope`` on ``engine`` (marked most recently used)."""
    key = (engine.identity, scope)
    with _registry_lock:
        found = _snapshotters.get(key)
        if found is None or found.engine is not engine:
            found = _snapshotters[key] = Snapshotter(engine, scope)
            if len(_snapshotters) > IDLE_MAX:
                _drop_idle()
        else:
            _snapshotters.move_to_end(key)
        return found


def _drop_idle() -> None:
    """Forget least recently used idle snapshotters past :data:`IDLE_MAX` (caller holds the
    registry lock). A process that wrote to 100,000 small scopes otherwise keeps 100,000 of them
    (about 1.5 KB each, outside the index memory bound). A forgotten one only loses what it knew of
    its scope's size: the scope's next write costs one more size check in the background."""
    for _ in range(len(_snapshotters) - IDLE_MAX):
        key, oldest = next(iter(_snapshotters.items()))
        if oldest.idle:
            del _snapshotters[key]
        else:  # a snapshot is pending: keep it so that flush_all() runs it
            _snapshotters.move_to_end(key)


def _forget_in_child() -> None:
    # After a fork, in the child: the parent's snapshot threads do not run here, and a lock one of
    # them held stays held; the pending snapshots are the parent's to write
    # (tests/tiers/longterm/test_embed_lanes.py forks after saves).
    global _snapshotters, _registry_lock
    _snapshotters, _registry_lock = OrderedDict(), threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def flush_all(engine: Engine, timeout: float = 30.0) -> None:
    """Run the pending snapshots of every scope on ``engine`` (called when a Memory closes)."""
    with _registry_lock:
        keys = [key for key, s in _snapshotters.items() if s.engine is engine]
        mine = [_snapshotters.pop(key) for key in keys]  # the engine closes next
    deadline = time.monotonic() + timeout
    for item in mine:
        item.flush(max(0.0, deadline - time.monotonic()))


def take(engine: Engine, scope: str) -> bool:
    """Write the scope's snapshot from this process's cache (built or refreshed first); False when
    the scope is empty or a deletion or wipe happened meanwhile (nothing is written then).

    Raises:
        EngineError: the engine failed (nothing is written).
    """
    keys = ScopeKeys.of(engine, scope)
    epoch, deletions = engine.mget([keys.epoch, keys.deletions])
    if epoch is None:
        return False
    cache = scope_cache(engine, scope)
    with cache.lock:
        cache.refresh(engine, keys)
        if cache.epoch != epoch or not cache.entries:
            return False
        meta: dict[str, object] = {
            "epoch": epoch,
            "version": cache.version,
            "threads": len(cache.threads) > 0,
        }
        # Serialised below without the lock: saves meanwhile never wait for it (see .export).
        frozen = cache.freeze(SNAPSHOT_PROFILE)
        try:
            encode_graph = ann.encoder(cache, epoch, frozen=True)
        except BaseException:  # a freeze left on would keep every search waiting
            frozen.done.set()
            cache.thaw(frozen)
            raise
    try:
        text = encode_state(frozen.index.export_state(), meta).decode("latin-1")  # see snapshot.load()
        frozen.index.pack()  # nothing changes it while frozen: its room to grow is given back
        graph = encode_graph()
    finally:
        frozen.done.set()
        with cache.lock:
            cache.thaw(frozen)
    batch = engine.batch()
    batch.require_equal(keys.epoch, epoch)
    batch.require_equal(keys.deletions, deletions)
    batch.set(keys.snapshot, text)
    batch.set(keys.snapshot_version, str(meta["version"]))
    if graph is not None:
        batch.set(keys.ann, graph)
    return bool(batch.execute().applied)
