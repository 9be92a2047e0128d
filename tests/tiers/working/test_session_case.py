"""Session ids are case-sensitive, so their working-memory namespaces are too: ``alice`` and
``Alice`` are two sessions with two namespaces, on every engine, and forgetting one leaves the
other."""

from __future__ import annotations

from memstack import Memory
from memstack.tiers.working import list_namespaces
from memstack.tiers.working.forget import session_namespace


def test_two_sessions_differing_in_case_have_two_namespaces(mem: Memory) -> None:
    lower, upper = mem.working("session/alice"), mem.working("session/Alice")
    lower.set("draft", "lower's")
    upper.set("draft", "upper's")
    assert lower.namespace != upper.namespace
    assert lower.get("draft").value == "lower's"  # type: ignore[union-attr]  # set above
    assert upper.get("draft").value == "upper's"  # type: ignore[union-attr]  # set above
    assert [e.key for e in lower.list()] == ["session/alice/draft"]
    assert [e.key for e in upper.list()] == ["session/Alice/draft"]
    assert list_namespaces(mem.engine, "session") == ["session/Alice", "session/alice"]


def test_forgetting_one_session_leaves_the_other_differing_in_case(mem: Memory) -> None:
    for sid in ("alice", "Alice"):
        mem.sessions.create(sid)
        mem.working(f"session/{sid}").set("notes", f"{sid}'s notes")
    report = mem.forget(session="Alice")
    assert report.remaining == 0
    assert mem.working("session/Alice").get("notes") is None
    assert mem.working("session/alice").get("notes").value == "alice's notes"  # type: ignore[union-attr]
    mem.forget(session="alice")
    assert mem.working("session/alice").get("notes") is None
    assert session_namespace("Alice") == "session/Alice"


def test_a_path_key_names_the_session_with_its_case(mem: Memory) -> None:
    mem.working("session/Alice").set("plan", "upper's")
    reader = mem.working("session/alice")
    assert reader.get("plan") is None
    assert reader.get("SESSION/Alice/Plan").value == "upper's"  # type: ignore[union-attr]  # set above
    assert reader.get("session/alice/plan") is None
