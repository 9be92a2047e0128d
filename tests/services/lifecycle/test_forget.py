"""``Memory.forget`` on every engine, for every selector: two owners get data in every tier the
selector reaches and in every derived family (change events, batch replies, cache, documents,
feedback, archives, snapshots), each with a random marker in its ids and values. Right after
forgetting one, a raw read of the whole keyspace (``Engine.raw_items``: every key, value and
engine record; on SQLite also the bytes of the file and of its WAL) holds no trace of its marker,
and every record of the other owner is byte-identical to before."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memstack import Memory
from memstack.engines.sqlite import SqliteEngine
from memstack.foundation.errors import InvalidKey, InvalidSessionId, InvalidValue
from memstack.foundation.keyspace import family_of
from memstack.search.embedders import FakeEmbedder
from memstack.services.lifecycle import TIERS
from memstack.services.lifecycle.forget import forget
from memstack.tiers.longterm.tracker import InjectionTracker

from .consistency import consistency_problems

Raw = dict[str, str]


def raw(mem: Memory) -> Raw:
    """Every record of the engine: where -> its whole text."""
    return dict(mem.engine.raw_items())


def holding(records: Raw, marker: str) -> Raw:
    return {where: text for where, text in records.items() if marker in text}


def file_bytes(mem: Memory) -> bytes:
    """The SQLite file and its WAL, as stored (b"" on other engines)."""
    engine = mem.engine
    if not isinstance(engine, SqliteEngine):
        return b""
    return b"".join(p.read_bytes() for p in (Path(engine.path), Path(f"{engine.path}-wal")) if p.exists())


def families(records: Raw) -> set[str]:
    return {found[0].name for where in records if (found := family_of(where)[1]) is not None}


def seed_session(mem: Memory, marker: str) -> str:
    sid = f"s-{marker}"
    mem.sessions.create(sid)
    mem.sessions.put(sid, "name", f"value {marker}")
    mem.sessions.increment(sid, "visits", 3)
    mem.turns.add(sid, "user", f"hello {marker}")
    mem.turns.add(sid, "assistant", f"hi {marker}")
    InjectionTracker(mem.engine).try_mark(sid, f"mem-{marker}")
    working = mem.working(f"session/{sid}")
    working.set("draft", {"note": marker}, tags=[f"t-{marker}"])
    working.set("gone", 1, tags=[f"t-{marker}"])
    working.delete("gone")  # on Redis its batch reply holds the entry's meta
    mem.windows.save("wf", {"input": f"q {marker}", "session_id": sid}, {"output": f"a {marker}"})
    mem.windows.save("wf", {"input": f"q {marker}", "session_id": sid}, {"output": "a"}, node_id="n1")
    return sid


def seed_scope(mem: Memory, marker: str) -> str:
    scope = f"u-{marker}"
    lt = mem.long_term(scope, embedder=FakeEmbedder(dim=32))
    for n in range(3):
        lt.save(id=f"{marker}-{n}", content=f"fact {n} about {marker}", tags=[marker])
    lt.save(id=f"{marker}-dup", content="fact 0 about " + marker)  # a duplicate for the dream pass
    lt.reembed()
    assert lt.snapshot()
    mem.dream(scope).dedupe()  # an archive of the duplicate
    mem.dream(scope).feedback.add("correction", f"not {marker}")
    InjectionTracker(mem.engine).try_mark("shared-session", f"{marker}-1")
    return scope


def seed_conversation(mem: Memory, marker: str) -> str:
    cid = f"c-{marker}"
    first = mem.conversations.append(cid, "user", f"question {marker}", message_id=f"m-{marker}")
    mem.conversations.append(cid, "assistant", f"answer {marker}", parent_message_id=first.message_id)
    node = mem.node_memory("app", cid, "node")
    node.add_messages("run1", f"node question {marker}", [], f"node answer {marker}", [])
    node.flush()
    return cid


def seed_namespace(mem: Memory, marker: str) -> str:
    namespace = f"agent/{marker}"
    working = mem.working(namespace)
    working.set("plan", {"step": marker})
    working.set(f"{namespace}/notes/a", f"note {marker}")
    working.set("gone", 1, tags=[marker])
    working.delete("gone")
    return namespace


def seed_board(mem: Memory, marker: str) -> str:
    board = f"b-{marker}"
    shared = mem.shared(board, embedder=FakeEmbedder(dim=32))
    shared[f"k-{marker}"] = {"v": marker}  # a change event on SQLite
    shared[f"k-{marker}"] = {"v": f"{marker} again"}
    cache = shared.cache
    assert cache is not None
    cache.store(f"what is {marker}", f"it is {marker}")
    shared.documents.store(f"d-{marker}", f"document about {marker}")
    return board


def seed_subject(mem: Memory, marker: str) -> str:
    """Data about one end user, in objects shared with other users (scope, namespace, board)."""
    subject = f"user-{marker}"
    mem.sessions.create(f"s-{marker}", subject=subject)
    mem.sessions.put(f"s-{marker}", "name", f"value {marker}")
    mem.turns.add(f"s-{marker}", "user", f"hello {marker}")
    mem.windows.save("wf", {"input": f"q {marker}", "session_id": f"s-{marker}"}, {"output": "a"})
    mem.conversations.append(f"c-{marker}", "user", f"question {marker}", subject=subject)
    lt = mem.long_term("common", embedder=FakeEmbedder(dim=32))
    lt.save(id=f"{marker}-fact", content=f"fact about {marker}", subject=subject)
    lt.save(id=f"{marker}-dup", content=f"fact about {marker}!", subject=subject)
    lt.reembed()
    mem.dream("common").dedupe()  # an archive of the subject's duplicate
    lt.snapshot()
    mem.dream("common").feedback.add("correction", f"not {marker}", subject=subject)
    InjectionTracker(mem.engine).try_mark("shared-session", f"{marker}-fact")
    working = mem.working("agent/common")
    working.set(f"agent/common/{marker}", {"note": marker}, subject=subject)
    board = mem.shared("common", embedder=FakeEmbedder(dim=32))
    board.set(f"k-{marker}", {"v": marker}, subject=subject)
    cache = board.cache
    assert cache is not None
    cache.store(f"what is {marker}", f"it is {marker}", subject=subject)
    board.store_document(f"d-{marker}", f"document about {marker}", subject=subject)
    return subject


SEEDS: dict[str, Callable[[Memory, str], str]] = {
    "session": seed_session,
    "scope": seed_scope,
    "conversation": seed_conversation,
    "namespace": seed_namespace,
    "board": seed_board,
    "subject": seed_subject,
}
DERIVED: dict[str, set[str]] = {
    "session": {"turns.log", "window.buffer", "window.node_buffer", "long_term.injected"},
    "scope": {"dream.record", "dream.feedback", "long_term.snapshot", "long_term.vectors"},
    "conversation": {"conversation.node"},
    "namespace": {"working.meta"},
    "board": {"cache.entry", "documents.doc", "shared.entry"},
    "subject": {"dream.record", "dream.feedback", "cache.entry", "documents.doc", "subject.objects"},
}
"""Families each seed must have reached, on every engine (the engine's own: see the test)."""


@pytest.mark.parametrize("selector", list(SEEDS))
def test_forget_leaves_no_trace_and_the_other_owner_intact(mem: Memory, selector: str) -> None:
    gone, kept = secrets.token_hex(6), secrets.token_hex(6)
    target = SEEDS[selector](mem, gone)
    SEEDS[selector](mem, kept)
    before = raw(mem)
    assert holding(before, gone) and holding(before, kept)  # the seeds reached the engine
    reached = families(holding(before, gone))
    assert DERIVED[selector] <= reached, DERIVED[selector] - reached
    if mem.engine.name.startswith("redis"):
        assert "engine.batch_reply" in reached or "engine.batch_reply_untagged" in reached
    if mem.engine.name in ("sqlite", "postgres") and selector in ("board", "subject"):
        assert "engine.event" in reached  # change messages kept for other processes' listeners
    if mem.engine.name == "postgres":
        assert "engine.batch_row" in reached  # first replies kept for a retry, with their keys

    report = mem.forget(**{selector: target}, vacuum=mem.engine.name == "sqlite")

    after = raw(mem)
    assert holding(after, gone) == {}, f"traces of {selector} left: {sorted(holding(after, gone))}"
    assert gone.encode() not in file_bytes(mem)
    theirs = {where: text for where, text in holding(before, kept).items() if gone not in text}
    assert {where: after.get(where) for where in theirs} == theirs
    assert report.remaining == 0 and report.complete
    assert report.selector == {selector: target}
    assert report.total > 0 and set(report.to_dict()["deleted"]) == set(TIERS)
    assert consistency_problems(mem.engine) == []
    assert mem.forget(**{selector: target}, audit=True).remaining == 0


def test_the_turn_log_keeps_the_other_sessions_entries_in_order(mem: Memory) -> None:
    for n in range(3):
        mem.turns.add("a", "user", f"a{n}")
        mem.turns.add("b", "user", f"b{n}")
    mem.forget(session="a")
    assert [e["content"] for e in mem.turns.log_entries()] == ["b0", "b1", "b2"]


def test_forgetting_again_finds_nothing(mem: Memory) -> None:
    scope = seed_scope(mem, "again")
    first = mem.forget(scope=scope)
    second = mem.forget(scope=scope)
    assert first.total > 0 and second.remaining == 0
    # the second run finds no data; on Redis the replies of its own no-op batches (which name the
    # scope's keys) are withdrawn all the same, and counted as the engine's
    assert all(n == 0 for tier, n in second.deleted.items() if tier != "engine"), second


def test_a_namespace_prefix_is_segment_aware(mem: Memory) -> None:
    mem.working("agent/a1").set("x", 1)
    mem.working("agent/a10").set("x", 2)
    mem.working("agent/a1").set("agent/a1/deep/y", 3)
    assert mem.forget(namespace="agent/a1/deep").deleted["working"] == 1
    assert mem.working("agent/a1").get("x") is not None
    assert mem.forget(namespace="agent/a1").deleted["working"] == 1
    assert mem.working("agent/a10").get("x") is not None


@pytest.mark.parametrize(
    ("kwargs", "error", "rule"),
    [
        ({}, InvalidValue, "exactly one of"),
        ({"session": "a", "scope": "b"}, InvalidValue, "exactly one of"),
        ({"scope": "../x"}, InvalidKey, "scope"),
        ({"namespace": ""}, InvalidKey, "namespace"),
        ({"session": "a b"}, InvalidSessionId, "session"),
    ],
)
def test_bad_selectors_are_refused_and_change_nothing(
    mem: Memory, kwargs: dict[str, Any], error: type[Exception], rule: str
) -> None:
    seed_scope(mem, "keep")
    before = raw(mem)
    with pytest.raises(error, match=rule):
        mem.forget(**kwargs)
    assert raw(mem) == before


def test_an_unknown_selector_from_a_surface_is_named(mem: Memory) -> None:
    with pytest.raises(InvalidValue, match="unknown: subjekt"):
        forget(mem.engine, subjekt="a")


def test_a_subject_leaves_shared_objects_to_the_others(mem: Memory) -> None:
    seed_subject(mem, "aaaa")
    seed_subject(mem, "bbbb")
    mem.dream("common").dedupe()  # a record holding copies of both users' entries
    report = mem.forget(subject="user-aaaa")
    assert report.remaining == 0
    assert any("bbbb" in e.content for e in mem.long_term("common").entries())
    assert all("aaaa" not in e.id for e in mem.long_term("common").entries())
    assert mem.working("agent/common").get("agent/common/bbbb") is not None
    assert mem.shared("common").get("k-bbbb") == {"v": "bbbb"}
    assert mem.shared("common").documents.get("d-bbbb") is not None
    with pytest.raises(InvalidValue, match="subject"):
        mem.long_term("common").save(content="x", subject="bad subject!")
