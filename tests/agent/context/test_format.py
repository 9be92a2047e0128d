"""The seed's context texts (spec items 34-36), without an engine."""

from __future__ import annotations

import pytest

from memstack.agent.context import format as fmt


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (272, "4m32s"),
        (272.999, "4m32s"),
        (7505, "125m05s"),
        (60, "1m00s"),
        (59.999, "59s"),
        (45, "45s"),
        (0.4, "0s"),
        (0, "0s"),
        (-3, "0s"),
    ],
)
def test_remaining_time_format(seconds: float, text: str) -> None:
    assert fmt.format_remaining(seconds) == text


def test_recall_line_and_header() -> None:
    assert fmt.recall_line("a1b2", "user-preferences/music", "Likes jazz") == (
        "- [a1b2] (user-preferences/music): Likes jazz"
    )
    assert fmt.recall_line("a1b2", None, "x") == "- [a1b2] (general): x"
    assert fmt.join_block(fmt.RECALL_HEADER, ["- one", "- two"]) == (
        "Recalled from long-term memory (relevant to this message):\n- one\n- two"
    )


def test_inventory_lines_never_carry_values() -> None:
    assert fmt.inventory_line("session/abc123/emails_inbox", 272.5, "email", ["inbox", "unread"]) == (
        "- session/abc123/emails_inbox: expires in 4m32s, category: email, tags: inbox, unread"
    )
    assert fmt.inventory_line("session/abc123/draft_reply", 121, None, []) == (
        "- session/abc123/draft_reply: expires in 2m01s"
    )
    assert fmt.inventory_line("k", 5, None, ["urgent"]) == "- k: expires in 5s, tags: urgent"


def test_headers_are_the_seeds() -> None:
    assert fmt.WORKING_HEADER == (
        "Working memory (scratch space — use search_working_memory or get_from_working_memory to retrieve):"
    )
    assert fmt.PATROL_HEADER == (
        "Patrol findings in working memory (use get_from_working_memory with the full key to read):"
    )
