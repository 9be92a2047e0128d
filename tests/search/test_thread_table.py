"""Propagation on a thread table: the same scores, in the same order, as the functions of
memstack.search.propagation over the same conversations (random ones, with ties and filters)."""

from __future__ import annotations

import heapq
import math
import random
from operator import itemgetter

import numpy as np
import pytest

from memstack.foundation.errors import InvalidInput
from memstack.search import propagation
from memstack.search.thread_table import Scored, ThreadTable, propagate, session_boost, speaker_boost

# two conversations (a: 5 turns, b: 1 turn) and their sessions and speakers
CONVERSATIONS = [["a1", "a2", "a3", "a4", "a5"], ["b1"]]
SESSION = {"a1": ("a", 1), "a2": ("a", 1), "a3": ("a", 2), "a4": ("a", 2), "a5": ("a", 2), "b1": ("b", 1)}
SPEAKER = {"a1": "Ann Lee", "a2": "Bob", "a3": "Ann Lee", "a4": "Bob", "a5": None, "b1": "Bob"}


def small() -> ThreadTable:
    return ThreadTable.build(CONVERSATIONS, SESSION.get, SPEAKER.get)


def window_of(conversations: list[list[str]], size: int) -> dict[str, list[str]]:
    out = {}
    for turns in conversations:
        for at, entry_id in enumerate(turns):
            out[entry_id] = turns[max(0, at - size) : at] + turns[at + 1 : at + 1 + size]
    return out


def test_slots_follow_the_conversations_in_turn_order() -> None:
    table = small()
    assert table.ids == ["a1", "a2", "a3", "a4", "a5", "b1"]
    assert table.slots(["a3", "nope", "b1"]).tolist() == [2, -1, 5]
    assert table.session.tolist() == [0, 0, 1, 1, 1, 2]
    assert table.speaker.tolist() == [0, 1, 0, 1, -1, 1]
    assert table.speakers == [frozenset({"ann", "lee"}), frozenset({"bob"})]


@pytest.mark.parametrize("size", [0, 1, 2, 7])
def test_neighbours_are_those_of_the_threads_in_their_order(size: int) -> None:
    table = small()
    near = table.neighbours(np.array([0, 2, 4, 5, -1], dtype=np.int64), size)
    assert near.shape == (5, 2 * size)
    want = window_of(CONVERSATIONS, size)
    got = [[table.ids[s] for s in row if s >= 0] for row in near]
    assert got == [want["a1"], want["a3"], want["a5"], want["b1"], []]


def test_an_unscored_neighbour_enters_after_the_scored_ids_and_a_filter_keeps_it_out() -> None:
    table = small()
    scored = Scored.of(table, ["a3", "x"], [1.0, 0.5])
    out = propagate(table, scored, 1, 0.5)
    assert list(zip(out.ids, out.scores.tolist(), strict=True)) == [
        ("a3", 1.0),
        ("x", 0.5),
        ("a2", 0.5),
        ("a4", 0.5),
    ]
    assert propagate(table, scored, 1, 0.5, allowed=lambda i: i != "a2").ids == ["a3", "x", "a4"]


def test_speaker_and_session_boosts() -> None:
    table = small()
    scored = Scored.of(table, ["a1", "a2", "a5", "b1", "x"], [0.2, 0.9, 0.3, 0.4, 0.1])
    named = speaker_boost(table, scored, "What did Lee say?", 0.5)
    assert named.scores.tolist() == [0.7, 0.9, 0.3, 0.4, 0.1]
    grouped = session_boost(table, scored, 0.5)
    assert grouped.scores.tolist() == pytest.approx([0.2 + 0.45, 0.9 + 0.45, 0.3 + 0.15, 0.4 + 0.2, 0.1])


def test_top_keeps_the_order_of_ties() -> None:
    scored = Scored.of(small(), ["b1", "a2", "a1", "a3"], [0.5, 0.9, 0.5, 0.5])
    assert scored.top(3) == [("a2", 0.9), ("b1", 0.5), ("a1", 0.5)]
    assert scored.top(0) == []


def test_zero_weight_changes_nothing_and_bad_weights_are_refused() -> None:
    table = small()
    scored = Scored.of(table, ["a1"], [1.0])
    assert propagate(table, scored, 1, 0.0) is scored
    assert speaker_boost(table, scored, "Ann", 0.0) is scored and session_boost(table, scored, 0.0) is scored
    for weight in (-0.1, math.inf, math.nan):
        with pytest.raises(InvalidInput, match="weight"):
            propagate(table, scored, 1, weight)
        with pytest.raises(InvalidInput, match="weight"):
            speaker_boost(table, scored, "q", weight)
        with pytest.raises(InvalidInput, match="weight"):
            session_boost(table, scored, weight)


def _random_case(seed: int) -> tuple[list[list[str]], dict[str, object], dict[str, str | None], list[str]]:
    rng = random.Random(seed)
    conversations, sessions, speakers = [], {}, {}
    for c in range(rng.randint(1, 6)):
        turns = [f"c{c}t{t}" for t in range(rng.randint(1, 30))]
        conversations.append(turns)
        for t, entry_id in enumerate(turns):
            sessions[entry_id] = None if rng.random() < 0.1 else (c, t // rng.randint(1, 8))
            speakers[entry_id] = rng.choice(["Ann", "Bob Smith", "Cy", None])
    loose = [f"x{n}" for n in range(5)]  # ids outside every conversation
    return conversations, sessions, speakers, loose


@pytest.mark.parametrize("seed", range(30))
def test_the_pipeline_equals_the_functions_over_callables(seed: int) -> None:
    conversations, sessions, speakers, loose = _random_case(seed)
    rng = random.Random(1000 + seed)
    table = ThreadTable.build(conversations, sessions.get, speakers.get)
    every = [*table.ids, *loose]
    ids = rng.sample(every, rng.randint(0, len(every)))
    scores = [rng.choice([0.0, 0.25, 0.5, 1.0, rng.random(), -rng.random()]) for _ in ids]  # ties
    hidden = set(rng.sample(every, len(every) // 4))
    size = rng.choice([1, 2, 3])
    weights = [rng.choice([0.0, 0.3, 0.5]) for _ in range(3)]
    query = rng.choice(["what did Ann say", "Smith?", "nobody here", ""])

    near = window_of(conversations, size)
    want = propagation.propagate(
        dict(zip(ids, scores, strict=True)),
        lambda i: near.get(i, []),
        weights[0],
        allowed=lambda i: i not in hidden,
    )
    got = propagate(table, Scored.of(table, ids, scores), size, weights[0], allowed=lambda i: i not in hidden)
    assert list(zip(got.ids, got.scores.tolist(), strict=True)) == list(want.items())

    want = propagation.speaker_boost(want, lambda i: speakers.get(i), query, weights[1])
    got = speaker_boost(table, got, query, weights[1])
    assert list(zip(got.ids, got.scores.tolist(), strict=True)) == list(want.items())

    want = propagation.session_boost(want, lambda i: sessions.get(i), weights[2])
    got = session_boost(table, got, weights[2])
    assert list(zip(got.ids, got.scores.tolist(), strict=True)) == list(want.items())

    keep = rng.randint(0, len(want) + 2)
    assert got.top(keep) == heapq.nlargest(keep, want.items(), key=itemgetter(1))
