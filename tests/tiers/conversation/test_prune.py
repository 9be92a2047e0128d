"""Token pruning by whole turns (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstack.tiers.conversation.prune import older_is_pruned, prune, turn_starts


def run(roles: str, tokens: list[int], limit: int) -> str:
    """Roles as letters (u/a/s), returns the kept roles with their index: 'u2a3'."""
    items = list(range(len(roles)))
    kept = prune(items, [{"u": "user", "a": "assistant", "s": "system"}[r] for r in roles], tokens, limit)
    return "".join(f"{roles[i]}{i}" for i in kept)


def test_turns_start_at_every_user_message() -> None:
    assert turn_starts(["assistant", "user", "assistant", "user", "tool", "assistant"]) == [0, 1, 3]
    assert turn_starts([]) == []


def test_everything_kept_when_it_fits() -> None:
    assert run("uaua", [10, 10, 10, 10], 40) == "u0a1u2a3"


def test_oldest_whole_turns_are_dropped_first() -> None:
    assert run("uauaua", [10] * 6, 40) == "u2a3u4a5"
    assert run("uauaua", [10] * 6, 39) == "u4a5"


def test_history_never_starts_with_an_orphaned_answer() -> None:
    # Dify's per-message pruning would return a1 u2 a3 here (30 tokens)
    assert run("uaua", [10, 10, 10, 10], 35) == "u2a3"


def test_a_turn_too_big_keeps_its_tail_down_to_one_message() -> None:
    assert run("ua", [50, 10], 20) == "a1"
    assert run("ua", [50, 10], 5) == "a1"
    assert run("u", [500], 1) == "u0"
    assert run("uaa", [5, 50, 10], 20) == "a2"


def test_leading_non_user_messages_are_a_turn_of_their_own() -> None:
    assert run("aua", [10, 10, 10], 20) == "u1a2"
    assert run("sua", [1, 10, 10], 25) == "s0u1a2"


def test_empty_and_mismatched_inputs() -> None:
    assert prune([], [], [], 10) == []
    with pytest.raises(ValueError, match="same length"):
        prune([1], ["user"], [], 10)


roles_st = st.lists(st.sampled_from(["user", "assistant", "tool"]), min_size=1, max_size=25)


@given(roles_st, st.data(), st.integers(0, 200))
def test_early_stop_never_changes_the_result(roles: list[str], data: st.DataObject, limit: int) -> None:
    tokens = data.draw(st.lists(st.integers(0, 40), min_size=len(roles), max_size=len(roles)))
    full = prune(list(range(len(roles))), roles, tokens, limit)
    for cut in range(len(roles)):
        suffix_roles, suffix_tokens = roles[cut:], tokens[cut:]
        if older_is_pruned(suffix_roles[::-1], suffix_tokens[::-1], limit):
            assert prune(list(range(cut, len(roles))), suffix_roles, suffix_tokens, limit) == full


@given(roles_st, st.data(), st.integers(0, 200))
def test_result_is_a_suffix_within_limit_or_a_single_message(
    roles: list[str], data: st.DataObject, limit: int
) -> None:
    tokens = data.draw(st.lists(st.integers(0, 40), min_size=len(roles), max_size=len(roles)))
    kept = prune(list(range(len(roles))), roles, tokens, limit)
    assert kept == list(range(len(roles) - len(kept), len(roles)))
    assert len(kept) >= 1
    assert sum(tokens[i] for i in kept) <= limit or len(kept) == 1
    if roles[kept[0]] == "assistant" and kept[0] > 0:
        # an answer leads only when nothing more than the newest turn's tail fits
        assert "user" not in roles[kept[0] :]
