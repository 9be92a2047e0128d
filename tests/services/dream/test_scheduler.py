"""The background scheduler (waits while the user is active) and the per-scope lease,
on every engine."""

from __future__ import annotations

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import Conflict
from memstack.services.dream import lease
from memstack.services.dream.scheduler import ACTIVITY_WINDOW, POLL, DreamScheduler


def _clock(mem: Memory) -> ManualClock:
    assert isinstance(mem.clock, ManualClock)
    return mem.clock


def _dupes(mem: Memory, scope: str) -> None:
    memory = mem.long_term(scope)
    memory.save(content="Pat walks the dog at seven every evening")
    memory.save(id="dup", content="pat walks the dog at seven every evening!")  # an id: an exact duplicate
    memory.save(content="Pat has two sisters")


def test_waits_while_the_user_is_active_then_runs_once_per_interval(mem: Memory) -> None:
    clock = _clock(mem)
    _dupes(mem, "pat")
    scheduler = DreamScheduler(mem, interval=3600)
    assert scheduler.passes == ("dedupe",) and scheduler.scopes() == ["pat"]
    assert scheduler.run_once() == []  # the scope just changed: the user is active
    clock.advance(ACTIVITY_WINDOW - 1)
    mem.conversations.append("pat-chat", "user", "still here", subject="pat")
    mem.conversations.append("other", "user", "another user talking", subject="sam")
    clock.advance(POLL)
    assert scheduler.run_once() == []  # a turn of pat's a moment ago (sam's delays only sam)
    clock.advance(ACTIVITY_WINDOW)
    (record,) = scheduler.run_once()
    assert record.kind == "dedupe" and record.status == "applied"
    mem.long_term("pat").save(id="dup2", content="Pat has two sisters.")  # an id: an exact duplicate
    clock.advance(ACTIVITY_WINDOW + POLL)
    assert scheduler.run_once() == []  # not due before the interval
    clock.advance(3600)
    assert [r.kind for r in scheduler.run_once()] == ["dedupe"]


def test_a_scope_leased_elsewhere_is_skipped_and_retried(mem: Memory) -> None:
    clock = _clock(mem)
    _dupes(mem, "pat")
    clock.advance(ACTIVITY_WINDOW + 1)
    token = lease.take(mem.engine, "pat")
    assert token is not None
    scheduler = DreamScheduler(mem, interval=3600)
    assert scheduler.run_once() == []
    assert lease.release(mem.engine, "pat", token)
    clock.advance(POLL)
    assert len(scheduler.run_once()) == 1


def test_lease_is_exclusive_expires_and_is_released_by_its_holder_only(mem: Memory) -> None:
    clock = _clock(mem)
    first = lease.take(mem.engine, "s", ttl=10)
    assert first is not None and lease.take(mem.engine, "s") is None
    with pytest.raises(Conflict, match="holds the lease"), lease.hold(mem.engine, "s"):
        pass
    clock.advance(11)
    second = lease.take(mem.engine, "s", ttl=10)
    assert second is not None
    assert not lease.release(mem.engine, "s", first)  # expired: not its lease any more
    assert lease.take(mem.engine, "s") is None
    assert lease.release(mem.engine, "s", second)
    with lease.hold(mem.engine, "s"):
        assert lease.take(mem.engine, "s") is None
    assert lease.take(mem.engine, "s") is not None


def test_start_and_stop_the_thread(mem: Memory) -> None:
    scheduler = DreamScheduler(mem, interval=60)
    scheduler.start()
    scheduler.stop()
    assert not scheduler._rounds.running
    with pytest.raises(ValueError, match="interval"):
        DreamScheduler(mem, interval=0)


def test_serve_starts_the_scheduler_only_when_asked(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    from memstack.doors.cli.service import _dream_scheduler

    monkeypatch.delenv("MEMSTACK_CHAT_URL", raising=False)
    monkeypatch.delenv("MEMSTACK_CHAT_MODEL", raising=False)
    assert _dream_scheduler(mem, 0) is None
    scheduler = _dream_scheduler(mem, 60)
    assert scheduler is not None and scheduler.passes == ("dedupe",)
    scheduler.stop()


def test_serve_takes_the_passes_to_schedule(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    from memstack.doors.cli.service import _dream_scheduler

    monkeypatch.setenv("MEMSTACK_CHAT_URL", "http://127.0.0.1:9/v1")  # never called: no scope is due
    monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "m")
    scheduler = _dream_scheduler(mem, 60, "extract, consolidate")
    assert scheduler is not None and scheduler.passes == ("extract", "consolidate")
    scheduler.stop()
    with pytest.raises(typer.Exit) as stopped:
        _dream_scheduler(mem, 60, "extract,dream-harder")
    assert stopped.value.exit_code == 2
    monkeypatch.delenv("MEMSTACK_CHAT_URL")
    with pytest.raises(typer.Exit):
        _dream_scheduler(mem, 60, "extract")  # no chat model for it
