"""Every working-memory namespace holding a live entry is listed, on every engine: sorted, under a
whole-segment prefix, expired namespaces left out without a write."""

from __future__ import annotations

import pytest

from memstack import ManualClock, Memory
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import InvalidKey
from memstack.services.transfer.dump import dump_lines
from memstack.tiers.working import list_namespaces


def test_namespaces_with_live_entries_are_listed(mem: Memory) -> None:
    assert list_namespaces(mem.engine) == []
    mem.working("session/s10").set("draft", 1)
    mem.working("session/s1").set("draft", 1)
    mem.working("patrol/heartbeat").set("alert", "disk full")
    assert list_namespaces(mem.engine) == ["patrol/heartbeat", "session/s1", "session/s10"]
    assert list_namespaces(mem.engine, "session") == ["session/s1", "session/s10"]
    assert list_namespaces(mem.engine, "session/s1") == ["session/s1"]  # whole segments: not s10
    assert list_namespaces(mem.engine, "subagent") == []


def test_expired_and_cleared_namespaces_are_left_out_by_a_read(mem: Memory, clock: ManualClock) -> None:
    mem.working("session/short").set("k", 1, ttl=10)
    mem.working("session/long").set("k", 1, ttl=1000)
    mem.working("session/cleared").set("k", 1)
    mem.working("session/cleared").clear()
    clock.advance(60)
    before = list(dump_lines(mem.engine))
    assert list_namespaces(mem.engine) == ["session/long"]
    assert list(dump_lines(mem.engine)) == before  # a listing never writes (prune() does)


def test_a_bad_prefix_is_refused(mem: Memory) -> None:
    with pytest.raises(InvalidKey):
        list_namespaces(mem.engine, "bad prefix!")


def test_each_tenant_lists_its_own(mem: Memory) -> None:
    acme = Memory(tenant_engine(mem.engine, "acme"))
    acme.working("session/a").set("k", 1)
    mem.working("session/b").set("k", 1)
    assert list_namespaces(acme.engine) == ["session/a"]
    assert list_namespaces(mem.engine) == ["session/b"]
