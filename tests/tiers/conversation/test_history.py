"""History selection over plain pages (pure, no engine)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memstack.tiers.conversation import Message
from memstack.tiers.conversation.history import drop_in_flight, effective_limit, select_history, select_thread


def msg(
    message_id: str, parent: str | None, role: str, content: str | None = None, tokens: int = 7
) -> Message:
    return Message(
        message_id, parent, role, content if content is not None else message_id, token_count=tokens
    )


SEED_002 = [  # newest first
    msg("C1", "C", "assistant"), msg("C", "A2", "user"), msg("A2", "A", "assistant"),
    msg("B1", "B", "assistant"), msg("B", "A1", "user"), msg("A1", "A", "assistant"), msg("A", None, "user"),
]  # fmt: skip


def paged(messages: list[Message], size: int, pulled: list[int]) -> Iterator[list[Message]]:
    for start in range(0, len(messages), size):
        pulled.append(start)
        yield messages[start : start + size]


@pytest.mark.parametrize(
    ("given", "limit"), [(None, 500), (0, 500), (-1, 500), (9999, 500), (1, 1), (500, 500)]
)
def test_effective_limit(given: int | None, limit: int) -> None:
    assert effective_limit(given) == limit


def test_seed_002_over_pages_of_any_size() -> None:
    for size in (1, 2, 3, 7):
        history = select_history(paged(SEED_002, size, []))
        assert [m["content"] for m in history] == ["A", "A2", "C", "C1"]
        assert [m.message_id for m in select_thread(paged(SEED_002, size, []))] == ["A", "A2", "C", "C1"]


def test_message_limit_cuts_the_pages_before_extraction() -> None:
    assert [m["content"] for m in select_history(paged(SEED_002, 2, []), message_limit=4)] == [
        "A2",
        "C",
        "C1",
    ]
    assert [m.message_id for m in select_thread(paged(SEED_002, 2, []), 2)] == ["C", "C1"]


def test_in_flight_rules() -> None:
    question = msg("Q", "C1", "user")
    placeholder = msg("P", "Q", "assistant", "", tokens=0)
    assert drop_in_flight([placeholder, question, *SEED_002[:1]]) == SEED_002[:1]
    assert drop_in_flight([question, *SEED_002[:1]]) == SEED_002[:1]
    answered_empty = msg("E", "Q", "assistant", "", tokens=3)  # pathological: kept, as Dify
    assert drop_in_flight([answered_empty, question]) == [answered_empty, question]
    assert drop_in_flight([]) == []


def test_pages_stop_once_the_budget_is_spent() -> None:
    long = [msg(f"m{i}", f"m{i - 1}" if i else None, ("user", "assistant")[i % 2]) for i in range(1000)][::-1]
    pulled: list[int] = []
    history = select_history(paged(long, 100, pulled), max_token_limit=200)
    assert len(history) == 20  # 20 messages of 10 tokens
    assert history[0]["role"] == "user"
    assert pulled == [0]  # one page was enough
    pulled.clear()
    assert len(select_history(paged(long, 100, pulled), max_token_limit=10**9)) == 500
    assert pulled == [0, 100, 200, 300, 400]
