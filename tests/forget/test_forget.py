"""``Memory.forget`` on every engine, for every selector: two owners get data in every tier the
selector reaches, each with a random marker in its ids and values; after forgetting one, a raw
dump of the engine holds no key or value with its marker, and every record of the other owner is
byte-identical to before."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import pytest
from memstack.lifecycle import TIERS
from memstack.lifecycle.forget import forget

from memstack import Memory
from memstack.dump import dump_lines
from memstack.errors import InvalidKey, InvalidValue
from memstack.longterm.tracker import InjectionTracker
from memstack.search.embedders import FakeEmbedder

from .consistency import consistency_problems


def raw(mem: Memory) -> dict[str, tuple[str, str]]:
    """Every key → (type, value as text): what a raw scan of the engine sees."""
    return {line["key"]: (line["type"], repr(line["value"])) for line in dump_lines(mem.engine)}


def holding(snapshot: dict[str, tuple[str, str]], marker: str) -> dict[str, tuple[str, str]]:
    return {k: v for k, v in snapshot.items() if marker in k or marker in v[1]}


def seed_session(mem: Memory, marker: str) -> str:
    sid = f"s-{marker}"
    mem.sessions.create(sid)
    mem.sessions.put(sid, "name", f"value {marker}")
    mem.sessions.increment(sid, "visits", 3)
    mem.turns.add(sid, "user", f"hello {marker}")
    mem.turns.add(sid, "assistant", f"hi {marker}")
    InjectionTracker(mem.engine).try_mark(sid, f"mem-{marker}")
    mem.working(f"session/{sid}").set("draft", {"note": marker})
    mem.windows.save("wf", {"input": f"q {marker}", "session_id": sid}, {"output": f"a {marker}"})
    return sid


def seed_scope(mem: Memory, marker: str) -> str:
    scope = f"u-{marker}"
    lt = mem.long_term(scope, embedder=FakeEmbedder(dim=32))
    for n in range(3):
        lt.save(id=f"{marker}-{n}", content=f"fact {n} about {marker}", tags=[marker])
    lt.save(id=f"{marker}-dup", content="fact 0 about " + marker)  # a duplicate for the dream pass
    lt.reembed()
    mem.dream(scope).dedupe()
    InjectionTracker(mem.engine).try_mark("shared-session", f"{marker}-1")
    return scope


def seed_conversation(mem: Memory, marker: str) -> str:
    cid = f"c-{marker}"
    first = mem.conversations.append(cid, "user", f"question {marker}", message_id=f"m-{marker}")
    mem.conversations.append(cid, "assistant", f"answer {marker}", parent_message_id=first.message_id)
    return cid


def seed_namespace(mem: Memory, marker: str) -> str:
    namespace = f"agent/{marker}"
    working = mem.working(namespace)
    working.set("plan", {"step": marker})
    working.set(f"{namespace}/notes/a", f"note {marker}")
    return namespace


def seed_board(mem: Memory, marker: str) -> str:
    board = f"b-{marker}"
    shared = mem.shared(board, embedder=FakeEmbedder(dim=32))
    shared[f"k-{marker}"] = {"v": marker}
    cache = shared.cache
    assert cache is not None
    cache.store(f"what is {marker}", f"it is {marker}")
    shared.documents.store(f"d-{marker}", f"document about {marker}")
    return board


SEEDS: dict[str, Callable[[Memory, str], str]] = {
    "session": seed_session,
    "scope": seed_scope,
    "conversation": seed_conversation,
    "namespace": seed_namespace,
    "board": seed_board,
}


@pytest.mark.parametrize("selector", list(SEEDS))
def test_forget_leaves_no_trace_and_the_other_owner_intact(mem: Memory, selector: str) -> None:
    gone, kept = secrets.token_hex(6), secrets.token_hex(6)
    target = SEEDS[selector](mem, gone)
    SEEDS[selector](mem, kept)
    before = raw(mem)
    assert holding(before, gone) and holding(before, kept)  # the seeds reached the engine

    report = mem.forget(**{selector: target})

    after = raw(mem)
    assert holding(after, gone) == {}, f"traces of {selector} left: {sorted(holding(after, gone))}"
    untouched = {k: v for k, v in before.items() if gone not in v[1] and gone not in k}
    assert {k: after.get(k) for k in untouched} == untouched
    assert report.remaining == 0 and report.complete
    assert report.selector == {selector: target}
    assert report.total > 0 and set(report.to_dict()["deleted"]) == set(TIERS)
    assert consistency_problems(mem.engine) == []


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
    # the second run finds no data; on Redis its own no-op batches' replies (naming the scope's
    # keys) are withdrawn all the same, and counted as the engine's
    assert {tier: n for tier, n in second.deleted.items() if tier != "engine"} == dict.fromkeys(
        second.deleted.keys() - {"engine"}, 0
    )


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
        forget(mem, subjekt="a")


def seed_subject(mem: Memory, marker: str) -> str:
    """Data about one end user, in objects shared with other users (scope, namespace, board)."""
    subject = f"user-{marker}"
    mem.sessions.create(f"s-{marker}", subject=subject)
    mem.sessions.put(f"s-{marker}", "name", f"value {marker}")
    mem.conversations.append(f"c-{marker}", "user", f"question {marker}", subject=subject)
    lt = mem.long_term("common", embedder=FakeEmbedder(dim=32))
    lt.save(id=f"{marker}-fact", content=f"fact about {marker}", subject=subject)
    lt.save(id=f"{marker}-dup", content=f"fact about {marker}!", subject=subject)
    lt.reembed()
    InjectionTracker(mem.engine).try_mark("shared-session", f"{marker}-fact")
    mem.working("agent/common").set(f"agent/common/{marker}", {"note": marker}, subject=subject)
    board = mem.shared("common")
    board.set(f"k-{marker}", {"v": marker}, subject=subject)
    return subject


SEEDS["subject"] = seed_subject


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
    with pytest.raises(InvalidValue, match="subject"):
        mem.long_term("common").save(content="x", subject="bad subject!")
