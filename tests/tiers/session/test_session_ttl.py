"""Whole-session TTL, alignment of every key to the meta, expiry as absence, and the session cap.

Boundary (spec item 11, expired only when ``now > created + ttl``): a session created at ``c``
with TTL ``t`` is live at exactly ``c + t`` and gone 1 ms later.
"""

from __future__ import annotations

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import InvalidValue, SessionLimitReached, SessionNotFound
from memstack.tiers.session import SessionStore
from memstack.tiers.session.layout import SESSIONS_KEY, Layout

from ._helpers import set_ms

HOUR_MS = 3_600_000


def _start(mem: Memory, clock: ManualClock) -> int:
    start = mem.engine.now_ms() + 1
    set_ms(clock, mem.engine, start)
    return start


def test_boundary_live_at_ttl_gone_one_ms_later(mem: Memory, clock: ManualClock) -> None:
    s = SessionStore(mem.engine, session_ttl_hours=1)
    created = _start(mem, clock)
    s.create("s")
    s.put("s", "k", 1)
    set_ms(clock, mem.engine, created + HOUR_MS)
    assert s.resume("s") == 1
    assert s.get("s", "k") == 1
    set_ms(clock, mem.engine, created + HOUR_MS + 1)
    with pytest.raises(SessionNotFound, match=r"^Session 's' not found$"):
        s.resume("s")


def test_every_key_expires_with_the_meta(mem: Memory, clock: ManualClock) -> None:
    s = SessionStore(mem.engine, session_ttl_hours=1)
    e = mem.engine
    lay = Layout(e.tag("s"))
    created = _start(mem, clock)
    s.create("s")
    set_ms(clock, e, created + HOUR_MS // 2)  # half-way: new keys get the meta's remaining TTL
    s.put("s", "a", "x")
    s.increment("s", "n")
    s.clear("s", "zz")
    meta_ttl = e.pttl(lay.meta)
    assert 0 < meta_ttl <= HOUR_MS // 2 + 1
    for key in (lay.data("a"), lay.data("n"), lay.keys, lay.history):
        assert e.pttl(key) == meta_ttl, key
    set_ms(clock, e, created + HOUR_MS + 1)
    assert [k for k in e.scan("rr:memory:") if k != SESSIONS_KEY] == []


def test_summary_keys_keep_the_ttl(mem: Memory, clock: ManualClock) -> None:
    s = SessionStore(mem.engine, session_ttl_hours=1, max_history=2)
    e = mem.engine
    lay = Layout(e.tag("s"))
    _start(mem, clock)
    s.create("s")
    for i in range(5):
        s.put("s", f"k{i}", i)
    assert s.history("s", 0)[0]["op"] == "summary"
    meta_ttl = e.pttl(lay.meta)
    assert e.pttl(lay.history) == meta_ttl
    assert e.pttl(lay.generation) == meta_ttl


def test_expired_session_is_absent_everywhere_and_purged(mem: Memory, clock: ManualClock) -> None:
    s = SessionStore(mem.engine, session_ttl_hours=0.5)
    s.create("old")
    s.create("keep", ttl_hours=0)
    s.put("old", "k", 1)
    clock.advance(1800.002)
    assert s.list() == ["keep"]
    assert mem.engine.smembers(SESSIONS_KEY) == {"keep", "old"}  # listing is a read
    assert s.prune() == 1
    assert mem.engine.smembers(SESSIONS_KEY) == {"keep"}
    for call in (
        lambda: s.get("old", "k"),
        lambda: s.put("old", "k", 2),
        lambda: s.increment("old", "n"),
        lambda: s.keys("old"),
        lambda: s.clear("old"),
        lambda: s.history("old"),
        lambda: s.delete("old"),
        lambda: s.resume("old"),
    ):
        with pytest.raises(SessionNotFound):
            call()
    assert not s.exists("old")
    s.create("old")  # the id is free again, and the new session is empty
    assert s.keys("old") == []
    assert s.history("old") == []
    assert s.resume("keep") == 0


def test_fractional_hours_and_meta(mem: Memory, clock: ManualClock) -> None:
    s = SessionStore(mem.engine, session_ttl_hours=0.0001)  # 0.36 s
    e = mem.engine
    created = _start(mem, clock)
    s.create("s")
    meta = e.hgetall(Layout(e.tag("s")).meta)
    assert float(meta["ttl_seconds"]) == pytest.approx(0.36)
    set_ms(clock, e, created + 361)  # ceil(0.36000000000000004 * 1000) = 361: still live
    assert s.resume("s") == 0
    set_ms(clock, e, created + 362)
    with pytest.raises(SessionNotFound):
        s.resume("s")


def test_meta_says_integral_ttl_like_the_seed(mem: Memory) -> None:
    SessionStore(mem.engine, session_ttl_hours=24).create("s")
    assert mem.engine.hget(Layout(mem.engine.tag("s")).meta, "ttl_seconds") == "86400"


def test_session_cap(mem: Memory, clock: ManualClock) -> None:
    s = SessionStore(mem.engine, max_sessions=3)
    for sid in ("a", "b", "c"):
        s.create(sid)
    with pytest.raises(SessionLimitReached, match=r"^Maximum sessions \(3\) reached$"):
        s.create("d")
    assert s.list() == ["a", "b", "c"]
    s.delete("b")
    s.create("d")
    short = SessionStore(mem.engine, max_sessions=4, session_ttl_hours=1)
    short.create("e")
    with pytest.raises(SessionLimitReached):
        short.create("f")
    clock.advance(3601)  # an expired session no longer counts
    short.create("f")


def test_default_cap_is_1000_in_process_only(mem: Memory, engine_kind: str) -> None:
    s = mem.sessions
    if engine_kind != "memory":
        assert s.max_sessions == 0
        return
    assert s.max_sessions == 1000
    for i in range(1000):
        s.create(f"s{i}")
    with pytest.raises(SessionLimitReached, match=r"^Maximum sessions \(1000\) reached$"):
        s.create("one-more")


@pytest.mark.parametrize("hours", [-1, float("nan"), float("inf"), 1e307, 10**400, 10 * 366 * 24])
def test_unusable_ttls_are_refused_and_nothing_is_created(mem: Memory, hours: float) -> None:
    # 10**400 hours came from schemathesis: an int too large for a float used to crash with OverflowError.
    with pytest.raises(InvalidValue, match="session TTL"):
        mem.sessions.create("s1", ttl_hours=hours)
    assert mem.sessions.list() == []
