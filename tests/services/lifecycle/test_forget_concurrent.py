"""Forget while writers keep writing to what is forgotten: afterwards no half-object exists (the
consistency scan), on every engine. Whatever a writer stores after the forget simply stays."""

from __future__ import annotations

import threading

from memstack import Memory
from memstack.foundation.errors import Conflict, SessionNotFound

from .consistency import consistency_problems


def test_forget_next_to_writers_leaves_no_half_objects(mem: Memory) -> None:
    scope, session = mem.long_term("busy"), "busy-session"
    mem.sessions.create(session)
    for n in range(300):
        scope.save(content=f"fact {n}")
        mem.sessions.put(session, f"k{n}", n)
    stop = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                scope.save(content=f"late fact {n}")
                mem.sessions.put(session, f"late{n}", n)
            except (Conflict, SessionNotFound):  # the session was forgotten under the writer
                continue
            except BaseException as exc:  # reported below: a writer must never hit anything else
                errors.append(exc)
                return

    writers = [threading.Thread(target=write) for _ in range(2)]
    for writer in writers:
        writer.start()
    try:
        for _ in range(3):
            try:
                mem.forget(scope="busy")
                mem.forget(session=session)
            except Conflict:  # the writers kept ahead for a whole round: a legitimate outcome
                pass
    finally:
        stop.set()
        for writer in writers:
            writer.join()
    assert errors == []
    assert consistency_problems(mem.engine) == []
    mem.forget(scope="busy")
    assert mem.long_term("busy").entries() == []


def test_a_cache_read_mid_forget_is_not_served_after_it(mem: Memory) -> None:
    """A read between a forget's first step (the epoch goes) and its last (the version and log go)
    caches the entries under no epoch; after the forget the epoch is absent again and the version
    is lower: the cache rebuilds instead of serving what was forgotten."""
    scope = mem.long_term("busy")
    for n in range(3):
        scope.save(content=f"fact {n}")
    mem.engine.delete(scope.keys.epoch)  # where a forget starts
    assert len(scope.entries()) == 3  # read mid-forget: cached under no epoch
    mem.forget(scope="busy")
    assert scope.entries() == []
    assert scope.search("fact") == []
