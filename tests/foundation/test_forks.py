"""The fork hook every layer registers with: a forked child renews what is registered, keeps a
Flag's state under a new lock, and never renews what nobody holds any more."""

from __future__ import annotations

import gc
import os

from _forked import held_by_a_thread, in_child
from memstack.foundation.forks import Flag, generation, renew_in_children


class _Part:
    def __init__(self) -> None:
        self.renewed_in: list[int] = []
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        self.renewed_in.append(generation())


def test_a_registered_part_is_renewed_in_the_child_only() -> None:
    part = _Part()
    parent = generation()

    def child() -> bool:
        return part.renewed_in == [parent + 1] and generation() == parent + 1

    assert in_child(child)
    assert part.renewed_in == [] and generation() == parent


def test_a_flag_keeps_its_state_and_a_lock_held_at_the_fork_blocks_nothing() -> None:
    up, down = Flag(), Flag()
    up.set()

    def child() -> bool:
        kept = up.is_set() and not down.is_set()
        down.set()  # the inner lock a parent thread held at the fork is not the child's
        return kept and down.wait(1) and up.wait(0)

    with held_by_a_thread(down._event._cond):
        assert in_child(child)
    assert not down.is_set()


def test_a_part_nobody_holds_is_forgotten() -> None:
    renewed: list[int] = []

    class Dropped(_Part):
        def _renew_in_child(self) -> None:
            renewed.append(os.getpid())

    Dropped()
    gc.collect()
    assert in_child(lambda: not renewed)
