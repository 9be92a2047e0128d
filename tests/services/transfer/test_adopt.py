"""Data stored without a tenant: ``memstack doctor`` counts it per tier, ``memstack tenants adopt``
moves it into a tenant, family by family (values and expiry times exactly), with a dry run, conflicts
left in place unless ``--overwrite``, and a second run finishing an interrupted one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import memstack
from memstack import ManualClock, Memory
from memstack.doors.cli import app as cli_app
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import InvalidValue
from memstack.foundation.keyspace import FAMILIES
from memstack.services.transfer.adopt import ADOPT_TIERS, ENGINE_WIDE, adopt, group_of, tier_of, untenanted
from memstack.services.transfer.dump import dump_lines


def _populate(mem: Memory) -> None:
    mem.sessions.create("s1", ttl_hours=1, subject="u1")
    mem.sessions.put("s1", "topic", "billing")
    mem.conversations.append("c1", "user", "hello", subject="u1")
    mem.long_term("alice").save(content="Alice plays the violin", subject="u1")
    mem.working("session/s1").set("draft", {"to": "bob"}, ttl=300)
    mem.shared("team")["plan"] = ["research", "write"]
    mem.turns.add("s1", "user", "hello")


def _records(engine: Engine, prefix: str = "") -> dict[str, Any]:
    """Every key under ``prefix`` (prefix cut) with its type, value and TTL."""
    return {r["key"][len(prefix) :]: r for r in dump_lines(engine, prefix)}


def test_untenanted_data_is_counted_and_moved_exactly(engine: Engine, clock: ManualClock) -> None:
    raw = Memory(engine)
    _populate(raw)
    before = _records(engine)
    counts = untenanted(engine)
    assert {"sessions", "conversations", "long_term", "working", "shared", "turn_log"} <= set(counts)
    # the subject's objects and its conversations' latest turns (subj:u1:objs, subj:u1:turns)
    assert counts["subject_index"] == 2 and sum(counts.values()) == len(before)

    planned = adopt(engine, "default", dry_run=True)
    assert _records(engine) == before  # a dry run writes nothing
    assert sum(planned.moved.values()) == len(before) and planned.conflicts == []

    clock.advance(10)
    report = adopt(engine, "default")
    assert report.moved == planned.moved and report.remaining == 0 and untenanted(engine) == {}
    after = _records(engine, "t:default:")
    for key, record in before.items():
        moved = dict(after[key], key=record["key"])
        if record["pttl"] is not None:  # the same expiry time: 10 s less left
            assert moved.pop("pttl") == record.pop("pttl") - 10_000
        assert moved == record
    view = Memory(tenant_engine(engine, "default"))
    assert view.sessions.get("s1", "topic") == "billing"
    assert [h.entry.content for h in view.long_term("alice").search("violin")] == ["Alice plays the violin"]
    assert view.working("session/s1").get("draft").value == {"to": "bob"}
    assert view.forget(subject="u1").remaining == 0  # the subject index moved with the data


def test_conflicts_stay_in_place_unless_overwritten_and_sets_merge(engine: Engine) -> None:
    Memory(engine).sessions.create("s1")
    Memory(engine).sessions.put("s1", "topic", "old layout")
    Memory(engine).sessions.create("s2")
    tenant = Memory(tenant_engine(engine, "default"))
    tenant.sessions.create("s1")
    tenant.sessions.put("s1", "topic", "tenant's own")
    report = adopt(engine, "default")
    assert report.conflicts == [group_of("rr:memory:" + engine.tag("s1") + ":topic", engine.tag)]
    assert tenant.sessions.get("s1", "topic") == "tenant's own"
    assert Memory(engine).sessions.get("s1", "topic") == "old layout"  # left where it was
    assert sorted(tenant.sessions.list()) == ["s1", "s2"]  # s2 moved; the index merged
    forced = adopt(engine, "default", overwrite=True)
    assert forced.conflicts == [] and forced.overwritten >= 1 and untenanted(engine) == {}
    assert tenant.sessions.get("s1", "topic") == "old layout"


def test_a_second_run_finishes_an_interrupted_one(engine: Engine) -> None:
    raw = Memory(engine)
    raw.long_term("alice").save(content="first")
    raw.long_term("bob").save(content="second")
    bob = [k for k in engine.scan("lt:") if "bob" in k]
    for key in bob:  # a run that copied bob's family and stopped before deleting it
        record = next(dump_lines(engine, key))
        if record["key"] == key:
            copy = tenant_engine(engine, "default")
            with copy.batch() as batch:
                if record["type"] == "string":
                    batch.set(key, record["value"])
                elif record["type"] == "set":
                    batch.sadd(key, *record["value"])
                else:
                    batch.rpush(key, *record["value"])
    report = adopt(engine, "default")
    assert report.conflicts == [] and untenanted(engine) == {}
    view = Memory(tenant_engine(engine, "default"))
    assert [e.content for e in view.long_term("bob").entries()] == ["second"]
    assert [e.content for e in view.long_term("alice").entries()] == ["first"]


def test_tiers_can_be_left_out_and_bad_names_are_refused(engine: Engine) -> None:
    raw = Memory(engine)
    raw.sessions.create("node-session")  # e.g. the pipeline node's, which reads the raw layout
    raw.long_term("alice").save(content="fact")
    report = adopt(engine, "default", tiers=["long_term"])
    assert set(report.moved) == {"long_term"}
    assert set(untenanted(engine)) == {"sessions"}
    with pytest.raises(InvalidValue, match="'session'"):
        adopt(engine, "default", tiers=["session"])


def test_doctor_reports_and_the_command_moves(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    with memstack.open(url, tenant=None, embedder="none") as raw:
        raw.long_term("alice").save(content="Alice plays the violin")
    runner = CliRunner()
    doctor = runner.invoke(cli_app, ["--url", url, "--json", "doctor"])
    rows = {row["check"]: row["result"] for row in json.loads(doctor.stdout)}
    assert "long_term 6" in rows["untenanted data"] and "tenants adopt" in rows["untenanted data"]
    dry = runner.invoke(
        cli_app, ["--url", url, "--json", "tenants", "adopt", "--into", "default", "--dry-run"]
    )
    assert dry.exit_code == 0 and json.loads(dry.stdout)["moved"] == {"long_term": 6}
    done = runner.invoke(cli_app, ["--url", url, "tenants", "adopt", "--into", "default"])
    assert (
        done.exit_code == 0 and "moved 6 keys in 1 family" in done.stdout
    )  # the entry's history is one of them
    found = runner.invoke(
        cli_app, ["--url", url, "--json", "memories", "search", "--scope", "alice", "violin"]
    )
    assert [h["entry"]["content"] for h in json.loads(found.stdout)["items"]] == ["Alice plays the violin"]
    doctor = runner.invoke(cli_app, ["--url", url, "--json", "doctor"])
    assert {r["check"]: r["result"] for r in json.loads(doctor.stdout)}["untenanted data"] == "none"


def test_tiers_and_groups_come_from_the_keyspace_registry() -> None:
    def cluster_tag(value: str) -> str:
        return "{" + value + "}"

    owners = {family.owner for family in FAMILIES}
    assert set(ADOPT_TIERS) == owners - set(ENGINE_WIDE) | {"other"}
    assert tier_of("lt:~inj:s1") == "long_term" and tier_of("subj:u1:objs") == "subject_index"
    assert tier_of("auth:keys") in ENGINE_WIDE and tier_of("nobody:declares:this") == "other"
    assert group_of("lt:alice:e:1") == group_of("lt:alice:vec") == "lt:alice:"
    assert group_of("lt:{alice}:e:1", cluster_tag) == "lt:{alice}:"
    assert group_of("turns:{turns}:s:a/b", cluster_tag) == group_of("turns:{turns}:log", cluster_tag)
    assert group_of("rr:memory:__sessions__") == "rr:memory:__sessions__"  # a global record alone
    assert group_of("nobody:declares:this") == "nobody:declares:this"
