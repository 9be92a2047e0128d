"""Relative dates in a turn are resolved against its session's time, so a question naming the date
finds the turn."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstack import Memory
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm.provenance import conversation_metadata
from memstack.tiers.longterm.relative_dates import resolved_dates

MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("I went to a support group yesterday", ["7 May 2023"]),
        ("See you tomorrow", ["9 May 2023"]),
        ("We painted last Saturday", ["6 May 2023"]),
        ("We paint next Monday", ["15 May 2023"]),  # strictly after the day it is said
        ("Last Monday was rough", ["1 May 2023"]),  # strictly before
        ("two weeks ago we camped", ["24 April 2023"]),
        ("3 days ago", ["5 May 2023"]),
        ("last week I ran", ["1 May 2023"]),
        ("I moved here last month", ["April 2023"]),
        ("the show is next month", ["June 2023"]),
        ("a few years ago", ["2020"]),
        ("last year", ["2022"]),
        ("I like the weekend", []),
        ("Nothing relative here", []),
    ],
)
def test_expressions_resolve_against_the_message_time(text: str, dates: list[str]) -> None:
    assert resolved_dates(text, MONDAY) == dates


def test_a_month_shift_crosses_the_year() -> None:
    assert resolved_dates("last month", datetime(2023, 1, 3, tzinfo=UTC)) == ["December 2022"]
    assert resolved_dates("next month", datetime(2023, 12, 3, tzinfo=UTC)) == ["January 2024"]


@pytest.mark.parametrize("bm25", [True, False], ids=["bm25", "hybrid"])
def test_a_question_naming_the_date_finds_the_turn_that_said_yesterday(mem: Memory, bm25: bool) -> None:
    lt = mem.long_term("s", embedder=None if bm25 else FakeEmbedder(dim=64))
    lines = [
        "The support group again today, a good support group",
        "That sounds lovely, how was it?",
        "How nice, nothing much here today",
        "I went to a support group yesterday",
    ]
    for turn, text in enumerate(lines):  # one session: only the resolved date tells the two visits apart
        meta = conversation_metadata("c", turn, "Ann" if turn % 2 == 0 else "Bob", MONDAY)
        lt.save(id=f"t{turn}", content=text, metadata=meta, created_at=MONDAY)
    if not bm25:
        assert lt.flush_embeddings(timeout=30)
    assert lt.search("support group on 7 May 2023")[0].entry.id == "t3"
