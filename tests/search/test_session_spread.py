"""A question asking for several things gets its hits spread over the conversation's sessions."""

from __future__ import annotations

import pytest

from memstack.search.session_spread import asks_for_several, spread_sessions
from memstack.search.thread_table import ThreadTable


@pytest.mark.parametrize(
    "query",
    [
        "What activities does Melanie partake in?",
        "What books has Melanie read?",
        "Which classical musicians does Melanie enjoy listening to?",
        "How many times has Melanie gone to the beach in 2023?",
        "What subject have Caroline and Melanie both painted?",
    ],
)
def test_questions_asking_for_several_things(query: str) -> None:
    assert asks_for_several(query)


@pytest.mark.parametrize(
    "query",
    [
        "What does Melanie do to destress?",  # a verb ending in s
        "What is Caroline's identity?",
        "When did Caroline go to the support group?",
        "What was the setting for John's first dance?",
        "Where did she move from?",
        "What class did he take?",
    ],
)
def test_questions_asking_for_one_thing(query: str) -> None:
    assert not asks_for_several(query)


def _table() -> ThreadTable:
    sessions = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B"}
    return ThreadTable.build([list(sessions)], sessions.get, lambda _: None)


def test_repeats_of_one_session_give_way_to_the_best_of_another() -> None:
    ranked = [("a1", 1.0), ("a2", 0.95), ("a3", 0.9), ("b1", 0.88), ("x", 0.5), ("b2", 0.2), ("a4", -0.1)]
    out = spread_sessions(_table(), ranked, 0.9)
    assert [i for i, _ in out][:3] == ["a1", "b1", "a2"]  # b1 keeps 0.88; a2 drops to 0.855
    scores = dict(out)
    assert scores["a3"] == pytest.approx(0.9 * 0.81) and scores["b2"] == pytest.approx(0.2 * 0.9)
    assert scores["x"] == 0.5 and scores["a4"] == -0.1  # no session, or no positive score: unchanged
    assert spread_sessions(_table(), ranked, 1.0) == ranked
