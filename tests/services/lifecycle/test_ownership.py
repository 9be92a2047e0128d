"""A subject label belongs to a value VERSION: forgetting Alice removes what Alice wrote and what is
only about her, never what Bob wrote over it; history and archives written by her go."""

from __future__ import annotations

from memstack import Memory
from memstack.search.embedders import FakeEmbedder


def test_bob_keeps_the_values_he_wrote_over_alices(mem: Memory) -> None:
    board, working, memories = mem.shared("team"), mem.working("agent/team"), mem.long_term("team")
    board.set("plan", "alice's plan", subject="alice")
    working.set("draft", "alice's draft", subject="alice")
    entry = memories.save(id="fact", content="alice's fact", subject="alice")
    board.set("alice-only", "about alice", subject="alice")
    working.set("alice-only", "about alice", subject="alice")
    memories.save(id="alice-only", content="about alice", subject="alice")

    board.set("plan", "bob's plan", subject="bob")
    working.set("draft", "bob's draft", subject="bob")
    memories.save(id=entry.id, content="bob's fact", subject="bob")

    report = mem.forget(subject="alice")

    assert report.remaining == 0
    assert board.get("plan") == "bob's plan"
    found = working.get("draft")
    assert found is not None and found.value == "bob's draft" and found.subject == "bob"
    kept = memories.get("fact")
    assert kept is not None and kept.content == "bob's fact" and kept.subject == "bob"
    assert "alice-only" not in board and working.get("alice-only") is None
    assert memories.get("alice-only") is None
    assert report.deleted["shared"] == 1 and report.deleted["working"] == 1
    assert report.deleted["long_term"] == 1
    assert "alice" not in "".join(text for _, text in mem.engine.raw_items())
    assert mem.forget(subject="bob").deleted["long_term"] == 1
    assert memories.get("fact") is None and "plan" not in board


def test_an_unlabelled_version_over_alices_is_nobodys_and_stays(mem: Memory) -> None:
    mem.shared("team").set("plan", "alice's plan", subject="alice")
    mem.shared("team").set("plan", "an anonymous plan")
    assert mem.forget(subject="alice").remaining == 0
    assert mem.shared("team").get("plan") == "an anonymous plan"


def test_alices_archived_versions_go_and_bobs_archive_stays(mem: Memory) -> None:
    memories = mem.long_term("team", embedder=FakeEmbedder(dim=16))
    memories.save(content="Alice likes jazz", subject="alice")
    memories.save(content="alice likes jazz", subject="alice")
    memories.save(content="Bob likes rock", subject="bob")
    memories.save(content="bob likes rock", subject="bob")
    record = mem.dream("team").dedupe()  # one record: both pairs retired, one entry made per pair
    assert record is not None and len(record.retired) == 4 and len(record.created) == 2

    report = mem.forget(subject="alice")

    (left,) = mem.dream("team").history()
    assert left.id == record.id and report.deleted["dream"] == 3
    assert sorted(a.entry.content for a in left.retired) == ["Bob likes rock", "bob likes rock"]
    assert [c.entry.content.lower() for c in left.created] == ["bob likes rock"]
    assert [e.content.lower() for e in memories.entries()] == ["bob likes rock"]
    mem.dream("team").undo(record.id)  # Bob's archive still undoes his part of the pass
    assert sorted(e.content for e in memories.entries()) == ["Bob likes rock", "bob likes rock"]


def test_a_consolidated_entry_is_its_sources_subject_when_they_agree(mem: Memory) -> None:
    memories = mem.long_term("team")
    memories.save(content="Alice likes jazz", subject="alice")
    memories.save(content="alice likes jazz", subject="alice")
    mem.dream("team").dedupe()
    (survivor,) = memories.entries()
    assert survivor.subject == "alice"
    mem.forget(subject="alice")
    assert memories.entries() == []
