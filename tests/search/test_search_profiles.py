"""Search profiles are a table of validated rows; LongTermMemory takes them by name."""

from __future__ import annotations

from typing import Any

import pytest

from memstack import Memory
from memstack.foundation.errors import InvalidConfiguration
from memstack.search import FUSION_PROFILES, PROFILES
from memstack.search.retrieval import SEARCH_PROFILES, SearchProfile, get_search_profile


def test_every_row_is_named_by_its_key_and_refers_to_known_tables() -> None:
    assert {"default", "context", "plain", "rockbot", "conversation", "rm3", "rocchio"} <= set(
        SEARCH_PROFILES
    )
    for name, row in SEARCH_PROFILES.items():
        assert row.name == name
        assert row.bm25 in PROFILES and row.fusion in FUSION_PROFILES
        assert row.conversation_fusion in ("", *FUSION_PROFILES)
    assert get_search_profile("plain") is SEARCH_PROFILES["plain"]
    custom = SearchProfile(name="x", context_window=1, context_weight=0.2)
    assert get_search_profile(custom) is custom and custom.uses_context
    assert not SearchProfile(name="y", context_window=3).uses_context  # no weight: the field is off
    assert SearchProfile(name="z", speaker_weight=0.1).propagates
    assert not SearchProfile(name="w", neighbour_weight=0.3, neighbour_window=0).propagates
    with pytest.raises(InvalidConfiguration, match="nope"):
        get_search_profile("nope")


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"bm25": "bm26"}, "bm25"),
        ({"fusion": "nope"}, "fusion"),
        ({"conversation_fusion": "nope"}, "conversation_fusion"),
        ({"context_window": -1}, "context_window"),
        ({"context_window": True}, "context_window"),
        ({"rm3_docs": 1001}, "rm3_docs"),
        ({"context_weight": float("nan")}, "context_weight"),
        ({"context_vector_weight": -0.1}, "context_vector_weight"),
        ({"rocchio_weight": float("inf")}, "rocchio_weight"),
        ({"rm3_query_weight": 1.5}, "rm3_query_weight"),
        ({"fusion_depth": -1}, "fusion_depth"),
        ({"fusion_depth": 100_001}, "fusion_depth"),
        ({"fusion_depth": True}, "fusion_depth"),
        ({"neighbour_window": -1}, "neighbour_window"),
        ({"neighbour_weight": float("nan")}, "neighbour_weight"),
        ({"session_weight": -0.3}, "session_weight"),
        ({"speaker_weight": float("inf")}, "speaker_weight"),
    ],
)
def test_bad_rows_are_refused(fields: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidConfiguration, match=match):
        SearchProfile(name="bad", **fields)


def test_long_term_memory_takes_profiles_by_name(mem: Memory) -> None:
    assert mem.long_term("p").fusion == SEARCH_PROFILES["default"].fusion
    assert mem.long_term("p", profile="rockbot").fusion == "rockbot"
    assert mem.long_term("p", profile="plain", fusion="rrf").fusion == "rrf"
    with pytest.raises(InvalidConfiguration, match="profile 'bm26'"):
        mem.long_term("p", profile="bm26")
    with pytest.raises(InvalidConfiguration, match="fusion 'nope'"):
        mem.long_term("p", fusion="nope")
