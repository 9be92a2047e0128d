"""A session's sliding windows are found by the keyspace's own rule, whatever the session id holds:
``forget(session="a__b")`` and ``forget(session="b")`` each remove exactly their own windows."""

from __future__ import annotations

import pytest

from memstack import Memory

SESSIONS = ("a__b", "b", "a", "x.y@z:1", "__b")


def _save(mem: Memory, session: str) -> None:
    for workflow in ("wf", "w_f"):
        mem.windows.save(workflow, {"input": "q", "session_id": session}, {"output": "a"})
        mem.windows.save(workflow, {"input": "q", "session_id": session}, {"output": "a"}, node_id="n_1")


def _windows(mem: Memory, session: str) -> int:
    return sum(
        len(mem.windows.messages(workflow, session, node_id=node))
        for workflow in ("wf", "w_f")
        for node in (None, "n_1")
    )


@pytest.mark.parametrize("target", SESSIONS)
def test_forget_removes_exactly_the_sessions_own_windows(mem: Memory, target: str) -> None:
    for session in SESSIONS:
        _save(mem, session)
    assert all(_windows(mem, s) == 8 for s in SESSIONS)

    report = mem.forget(session=target)

    assert report.remaining == 0 and report.deleted["conversations"] == 4 * 3
    assert _windows(mem, target) == 0
    assert all(_windows(mem, s) == 8 for s in SESSIONS if s != target)
