"""Batch ids: what makes a write batch safe to send again after its reply was lost.

Every write batch carries a random id. The script keeps its first reply, followed by a line with
the batch's keys (so a forget finds the replies of the keys it removed), under the dedupe key
``ms:batch:{TAG}:<id>`` (family ``engine.batch_reply``) for
:attr:`ttl <RedisEngine.dedupe_ttl_ms>` milliseconds; a repeat of the same batch finds the key,
applies nothing and answers the first reply. The key must hash to the batch's slot (a script
touches one slot): ``TAG`` is a short string that hashes to that slot. :meth:`RedisEngine.scan`
never lists dedupe keys.
"""

from __future__ import annotations

import itertools
import os
import threading
from typing import Final

from redis.crc import key_slot

from ...foundation.keyspace.families import STEMS

__all__ = ["PREFIX", "WITHDRAWN", "dedupe_key", "is_dedupe_key", "slot_tag"]

PREFIX: Final = STEMS["batch"].lead
WITHDRAWN: Final = "MSWITHDRAWN"
"""What a batch reply holds once a forget withdrew it (it may have held forgotten values): the
batch was applied, and a retry of it learns that its results are gone (never applies it again)."""
_ID_CHARS: Final = 16
_SLOTS: Final = 16384

_slot_tags: list[str] = []
_slot_tags_lock = threading.Lock()


def _new_slot_tags_lock_in_child() -> None:
    # After a fork, in the child: a parent thread building the table at the fork holds the lock
    # for ever here and may have left the table half filled: the child builds its own.
    global _slot_tags_lock
    _slot_tags_lock = threading.Lock()
    if len(_slot_tags) != _SLOTS:
        _slot_tags.clear()


os.register_at_fork(after_in_child=_new_slot_tags_lock_in_child)


def slot_tag(slot: int) -> str:
    """A short tag that hashes to ``slot`` (the table is built once, on first use)."""
    if not _slot_tags:
        with _slot_tags_lock:
            if not _slot_tags:
                table: list[str | None] = [None] * _SLOTS
                missing = _SLOTS
                n = 0
                while missing:
                    text = format(n, "x")
                    slot_of = key_slot(text.encode())
                    if table[slot_of] is None:
                        table[slot_of] = text
                        missing -= 1
                    n += 1
                _slot_tags.extend(t for t in table if t is not None)
    return _slot_tags[slot]


class _Ids:
    """Batch ids: 10 random hex digits per process (drawn again in a forked child, and after
    16**6 ids) and a 6-digit counter. A counter costs far less than ``os.urandom`` per batch, and
    ids stay unique across processes and machines (40 random bits) and within the dedupe TTL."""

    def __init__(self) -> None:
        self.draw()

    def draw(self) -> None:
        self.prefix = os.urandom(5).hex()
        self.counter = itertools.count()

    def next(self) -> str:
        n = next(self.counter)  # atomic under the GIL: threads never share an id
        if n >= _COUNTER_WRAP:
            self.draw()
            n = next(self.counter)
        return f"{self.prefix}{n:06x}"


_COUNTER_WRAP: Final = 16**6
_ids = _Ids()
os.register_at_fork(after_in_child=_ids.draw)


def dedupe_key(slot: int | None) -> str:
    """A fresh dedupe key for a batch of slot ``slot`` (None: a standalone server, no tag). The
    tag is a short string of that slot, never the tag of one of the batch's keys: a key's tag names
    a scope (a session, a user), which a forget must leave nowhere, not even in this key's name."""
    batch_id = _ids.next()
    return f"{PREFIX}{batch_id}" if slot is None else f"{PREFIX}{{{slot_tag(slot)}}}:{batch_id}"


def is_dedupe_key(key: str) -> bool:
    """Whether ``key`` is a dedupe key (``scan`` leaves them out)."""
    if not key.startswith(PREFIX):
        return False
    batch_id = key.rpartition(":")[2]
    return len(batch_id) == _ID_CHARS and all(c in "0123456789abcdef" for c in batch_id)
