"""What a process made by ``fork`` keeps of the objects its parent made: one hook for every layer.

``fork`` copies only the calling thread: in the child the parent's other threads (an engine's
dispatcher, listener or sweeper, a tier's drainer, a store's TTL sweeper) are gone while the state
of their owners still names them, so work handed to them waits for ever, and a lock one of them
held at the fork stays held for ever. An object owning such threads, locks or connections
registers here (:func:`renew_in_children`); right after a fork, in the child, each one's
``_renew_in_child()`` forgets the parent's threads, connections and subscribers and takes new
locks, touching none of them: they are the parent's, which keeps using them (closing a copied
socket could end the parent's session). Renewal only resets state: threads start again, and
connections open again, on the child's first use, so a child that execs at once (``subprocess``
with ``preexec_fn``) pays next to nothing.

This module sits at the bottom of the layers so that engines, tiers, services and the agent's
stores all register the same way.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from typing import Protocol

__all__ = ["Flag", "Renewable", "generation", "renew_in_children"]

log = logging.getLogger("memstack")


class Renewable(Protocol):
    # Private by name: the parts include public classes (SlidingWindows, SharedMemory, ManualClock)
    # whose public methods are their API and each have an async twin (tests/tiers/conversation/test_aio.py).
    def _renew_in_child(self) -> None:
        """Called in a forked child, by its only thread: drop the parent's machinery."""


# Insertion order (parts register as they are built, their owner last), weak: a part nobody
# holds any more needs no renewal.
_live: weakref.WeakKeyDictionary[Renewable, None] = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_generation = 0


def generation() -> int:
    """How many forks separate this process from the one that imported memstack: something
    made under another number belongs to an ancestor."""
    return _generation


def renew_in_children(part: Renewable) -> None:
    """Have ``part._renew_in_child()`` called in every child this process forks from now on."""
    with _lock:
        _live[part] = None


class Flag:
    """A :class:`threading.Event` (set once, waited on) whose inner lock is new in a forked child,
    where it keeps its state: a parent thread setting or waiting on it at the fork (an engine
    closing, a sweeper waking) would otherwise leave that lock held for ever there."""

    __slots__ = ("__weakref__", "_event")

    def __init__(self) -> None:
        self._event = threading.Event()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        was_set, self._event = self._event.is_set(), threading.Event()
        if was_set:
            self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        self._event.set()

    def clear(self) -> None:
        self._event.clear()

    def wait(self, timeout: float | None = None) -> bool:
        """Whether the flag is set, after waiting up to ``timeout`` seconds for it."""
        return self._event.wait(timeout)


def _renew_all_in_child() -> None:
    global _lock, _generation
    _generation += 1
    _lock = threading.Lock()  # a parent thread registering at the fork never releases it here
    for part in list(_live):
        try:
            part._renew_in_child()
        except Exception:  # one part's failure must not leave the others the parent's
            log.exception("renewing %r in a forked child failed", part)


os.register_at_fork(after_in_child=_renew_all_in_child)
