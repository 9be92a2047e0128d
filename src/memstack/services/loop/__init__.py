"""The agent memory loop: ``remember`` a user's messages, ``recall`` what is known about them.

One service (:class:`MemoryLoop`) owns the loop over the tiers, one user at a time:

- :meth:`MemoryLoop.remember` appends the messages to the user's conversation (its subject is the
  user) and saves each turn in the user's long-term scope (the scope named after the user), with
  its conversation provenance, so it is searchable at once; with a chat model it queues a
  debounced extract pass for that user, run in the background, never on the write path.
- :meth:`MemoryLoop.recall` ranks the user's memories, extracted facts and turns, each with where
  it comes from (conversation, message ids).
- ``Memory.forget(subject=user)`` removes all of it.
"""

from __future__ import annotations

from .recall import Recalled
from .service import DEBOUNCE, MemoryLoop, Remembered

__all__ = ["DEBOUNCE", "MemoryLoop", "Recalled", "Remembered"]
