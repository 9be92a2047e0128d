"""Retention as data: parsing, the sweep of each sweep-enforced policy on every engine (with the
manual clock), the archive policy reaching the dream records' TTL, and the serve/doctor surfaces."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import memstack
from memstack import Memory
from memstack.doors.cli import app as cli_app
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.clock import ManualClock
from memstack.foundation.errors import InvalidConfiguration
from memstack.services.lifecycle.retention import POLICIES, Retention, parse_retention, sweep
from memstack.services.lifecycle.sweeper import stored_tenants, sweep_all

DAY = 86400.0


def test_parsing() -> None:
    assert parse_retention("", {}) == Retention()
    assert parse_retention(
        None, {"MEMSTACK_RETENTION": "long_term_max_age=2d, turn_log_max_age=90m"}
    ) == Retention(long_term_max_age=2 * DAY, turn_log_max_age=5400.0)
    assert parse_retention("conversation_idle=30", {}).conversation_idle == 30.0
    with pytest.raises(InvalidConfiguration, match="NAME one of long_term_max_age"):
        parse_retention("forever=1d", {})
    with pytest.raises(InvalidConfiguration, match="must be a number"):
        parse_retention("long_term_max_age=soon", {})
    with pytest.raises(InvalidConfiguration, match="ten years"):
        parse_retention("long_term_max_age=0s", {})
    assert [row["policy"] for row in Retention().describe()] == [p[0] for p in POLICIES]


def test_the_sweep_applies_each_policy(mem: Memory, clock: ManualClock) -> None:
    policy = Retention(long_term_max_age=10 * DAY, conversation_idle=DAY, turn_log_max_age=DAY)
    old = mem.long_term("u").save(content="an old fact")
    mem.conversations.append("quiet", "user", "hello")
    mem.turns.add("s", "user", "an old turn")
    clock.advance(2 * DAY)
    mem.conversations.append("busy", "user", "hello")
    fresh_turn = mem.turns.add("s", "user", "a fresh turn")
    assert sweep(mem, policy) == {
        "long_term": 0,
        "expired": 0,
        "conversations": 1,
        "turn_log": 1,
        "registries": 0,
    }
    # "s" holds the turns recorded for session s (they live in conversations), the fresh one
    # among them: conversation retention keeps it, the turn log's own keeps only its fresh entry.
    assert mem.conversations.conversations() == ["busy", "s"]
    assert [e["content"] for e in mem.turns.log_entries()] == [fresh_turn.content]
    clock.advance(9 * DAY)
    kept = mem.long_term("u").save(content="a new fact")
    assert sweep(mem, policy)["long_term"] == 1
    assert [e.id for e in mem.long_term("u").entries()] == [kept.id] and old.id != kept.id
    assert sweep(mem, Retention()) == {
        "long_term": 0,
        "expired": 0,
        "conversations": 0,
        "turn_log": 0,
        "registries": 0,
    }


def test_the_archive_policy_sets_the_dream_records_ttl(engine: Engine, clock: ManualClock) -> None:
    mem = Memory(engine, retention=Retention(archive_max_age=DAY))
    lt = mem.long_term("u")
    lt.save(content="Bob likes blue a lot")
    lt.save(id="dup", content="bob likes blue a lot!")  # an id: an exact duplicate
    record = mem.dream("u").dedupe()
    assert record is not None and mem.dream("u").history()
    clock.advance(DAY + 1)
    assert mem.dream("u").history() == []


def test_the_server_sweep_finds_every_tenant(engine: Engine, clock: ManualClock) -> None:
    for tenant in ("acme", "beta"):
        Memory(tenant_engine(engine, tenant)).long_term().save(content=f"{tenant} fact")
    assert stored_tenants(engine) == ["acme", "beta"]
    clock.advance(3 * DAY)
    assert sweep_all(engine, Retention(long_term_max_age=DAY))["long_term"] == 2
    assert all(Memory(tenant_engine(engine, t)).long_term().entries() == [] for t in ("acme", "beta"))


def test_doctor_shows_the_policies_and_serve_refuses_a_bad_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    monkeypatch.setenv("MEMSTACK_RETENTION", "turn_log_max_age=7d")
    monkeypatch.setenv("MEMSTACK_EMBEDDER", "none")
    out = CliRunner().invoke(cli_app, ["--url", url, "doctor"]).stdout
    assert "retention turn_log_max_age" in out and "604800 s" in out
    assert "retention long_term_max_age" in out and "keep forever" in out
    bad = CliRunner().invoke(cli_app, ["--url", url, "serve", "--retention", "forever=1d"])
    assert bad.exit_code == 2 and "forever" in bad.stderr
    with memstack.open(url, retention="long_term_max_age=1d") as mem:
        assert mem.retention.long_term_max_age == DAY
