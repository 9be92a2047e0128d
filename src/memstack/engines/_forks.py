"""What a process made by ``fork`` keeps of the engines its parent opened.

``fork`` copies only the calling thread: in the child an engine's background threads (the
dispatcher, a listener, the sweeper) are gone while its state still names them, so a subscription
made there would wait for a thread that never runs, and a lock one of them held at the fork
stays held for ever. The parts of an engine that own such threads, locks or connections register
here (:func:`renew_in_children`); right after a fork, in the child, each one's
``renew_in_child()`` forgets the parent's threads, connections and subscribers and takes new
locks, touching none of them: they are the parent's, which keeps using them (closing a copied
socket could end the parent's session). What started on demand starts again on first use.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from typing import Protocol

__all__ = ["Renewable", "generation", "renew_in_children"]

log = logging.getLogger("memstack.engines")


class Renewable(Protocol):
    def renew_in_child(self) -> None:
        """Called in a forked child, by its only thread: drop the parent's machinery."""


# Insertion order (engines' parts register as they are built, their engine last), weak: a part
# nobody holds any more needs no renewal.
_live: weakref.WeakKeyDictionary[Renewable, None] = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_generation = 0


def generation() -> int:
    """How many forks separate this process from the one that imported memstack: something
    made under another number belongs to an ancestor."""
    return _generation


def renew_in_children(part: Renewable) -> None:
    """Have ``part.renew_in_child()`` called in every child this process forks from now on."""
    with _lock:
        _live[part] = None


def _renew_all_in_child() -> None:
    global _lock, _generation
    _generation += 1
    _lock = threading.Lock()  # a parent thread registering at the fork never releases it here
    for part in list(_live):
        try:
            part.renew_in_child()
        except Exception:  # one part's failure must not leave the others the parent's
            log.exception("renewing %r in a forked child failed", part)


os.register_at_fork(after_in_child=_renew_all_in_child)
