"""Key and glob subscriptions of one shared memory, and the thread that runs their callbacks.

Changes are queued in the order the engine delivers them (write order) and drained by ONE
background thread per memory, so a slow callback never delays the wake-up of blocked readers
(those are woken on the engine's delivery thread) and writers never see callback exceptions.
For each change, exact-key callbacks run first (in registration order), then pattern callbacks
(in registration order).
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import cast

from ...foundation.forks import renew_in_children
from .change import MemoryChange
from .glob import compile_glob

__all__ = ["Callback", "Subscriptions"]

log = logging.getLogger("memstack.tiers.shared")

Callback = Callable[[MemoryChange], object]
_STOP = object()


class Subscriptions:
    """Callbacks by key and by glob, with a lazily started drainer thread."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._exact: dict[str, dict[str, Callback]] = {}
        self._patterns: dict[str, tuple[re.Pattern[str], Callback]] = {}
        self._closed = False
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """A new lock and queue, no drainer (also the first state): in a forked child the parent's
        thread is gone, and what it had queued is the parent's to run. The callbacks stay: the
        child's copies run on the changes the child sees, from its first one."""
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def add(self, keys: Sequence[str], callback: Callback) -> str:
        """Register ``callback`` under every key of ``keys``; returns the one subscription id."""
        sub_id = uuid.uuid4().hex
        with self._lock:
            for key in keys:
                self._exact.setdefault(key, {})[sub_id] = callback
        return sub_id

    def add_pattern(self, pattern: str, callback: Callback) -> str:
        """Register ``callback`` for every key matching glob ``pattern``; returns its id."""
        sub_id = uuid.uuid4().hex
        matcher = compile_glob(pattern)
        with self._lock:
            self._patterns[sub_id] = (matcher, callback)
        return sub_id

    def remove(self, sub_id: str) -> bool:
        """Drop subscription ``sub_id`` (exact or pattern); True if it existed."""
        removed = False
        with self._lock:
            for key in list(self._exact):
                if self._exact[key].pop(sub_id, None) is not None:
                    removed = True
                    if not self._exact[key]:
                        del self._exact[key]
            if self._patterns.pop(sub_id, None) is not None:
                removed = True
        return removed

    def remove_keys(self, keys: Sequence[str]) -> None:
        """Drop every exact-key subscription on ``keys`` (pattern subscriptions stay)."""
        with self._lock:
            for key in keys:
                self._exact.pop(key, None)

    def subscribed(self, key: str) -> bool:
        """True if an exact subscription exists on ``key`` or a pattern matches it."""
        with self._lock:
            if self._exact.get(key):
                return True
            return any(m.match(key) for m, _ in self._patterns.values())

    def matching(self, key: str) -> list[Callback]:
        """Callbacks for a change of ``key``: exact ones first, then patterns."""
        with self._lock:
            found = list(self._exact.get(key, {}).values())
            found.extend(cb for m, cb in self._patterns.values() if m.match(key))
        return found

    def dispatch(self, callbacks: list[Callback], make_change: Callable[[], MemoryChange]) -> None:
        """Queue one change for ``callbacks``; each callback gets its own :class:`MemoryChange`."""
        with self._lock:
            if self._closed:
                return
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._drain, name=f"memstack-shared-{self._name}", daemon=True
                )
                self._thread.start()
            self._queue.put((callbacks, make_change))

    def _drain(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            pair = cast(tuple[list[Callback], Callable[[], MemoryChange]], item)  # pairs or _STOP
            callbacks, make_change = pair
            for callback in callbacks:
                try:
                    callback(make_change())
                except Exception:
                    log.exception("shared memory %r: subscription callback failed", self._name)

    def close(self) -> None:
        """Forget every subscription; the drainer finishes what was queued, then stops."""
        with self._lock:
            self._closed = True
            self._exact.clear()
            self._patterns.clear()
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)
            if thread is not threading.current_thread():
                thread.join(timeout=5)
