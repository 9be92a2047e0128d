"""Thread extraction (pure): the branch shapes of spec section 3 items 1-5 and seed 002."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from memstack.tiers.conversation.thread import UUID_NIL, ThreadWalk, extract_thread


@dataclass(frozen=True)
class M:
    message_id: str
    parent_message_id: str | None


def ids(messages: list[M]) -> list[str]:
    return [m.message_id for m in messages]


def newest_first(*pairs: tuple[str, str | None]) -> list[M]:
    """Messages given oldest first, returned newest first (the order the walk takes)."""
    return [M(i, p) for i, p in reversed(pairs)]


SEED_002 = newest_first(
    ("A", None), ("A'", "A"), ("B", "A'"), ("B'", "B"), ("A''", "A"), ("C", "A''"), ("C'", "C")
)


def test_seed_002_regeneration_gives_the_new_thread() -> None:
    assert ids(extract_thread(SEED_002))[::-1] == ["A", "A''", "C", "C'"]


def test_from_an_older_leaf_the_old_branch_is_the_thread() -> None:
    # the walk starts at the first message it is given: B' as current message
    from_b = [m for m in SEED_002 if m.message_id not in ("C'", "C", "A''")]
    assert ids(extract_thread(from_b))[::-1] == ["A", "A'", "B", "B'"]


def test_linear_chain_and_empty_input() -> None:
    chain = newest_first(("1", None), ("2", "1"), ("3", "2"))
    assert ids(extract_thread(chain)) == ["3", "2", "1"]
    assert extract_thread([]) == []


def test_uuid_nil_legacy_takes_every_older_message() -> None:
    messages = newest_first(("1", UUID_NIL), ("2", UUID_NIL), ("3", UUID_NIL), ("4", "3"))
    assert ids(extract_thread(messages)) == ["4", "3", "2", "1"]


def test_legacy_walk_stops_at_a_root() -> None:
    messages = newest_first(("0", UUID_NIL), ("1", None), ("2", UUID_NIL), ("3", UUID_NIL))
    assert ids(extract_thread(messages)) == ["3", "2", "1"]


def test_falsy_parent_is_a_root_and_stops_the_walk() -> None:
    messages = newest_first(("old", None), ("root", ""), ("leaf", "root"))
    assert ids(extract_thread(messages)) == ["leaf", "root"]
    assert ids(extract_thread(newest_first(("old", None), ("alone", None)))) == ["alone"]


def test_parentless_message_of_another_branch_is_skipped_not_taken() -> None:
    # the older upstream variant (spec item 5) would return [leaf, other-root]
    messages = newest_first(("p", None), ("other-root", None), ("leaf", "p"))
    assert ids(extract_thread(messages)) == ["leaf", "p"]


def test_missing_parent_ends_the_walk() -> None:
    messages = newest_first(("x", None), ("leaf", "not-loaded"))
    assert ids(extract_thread(messages)) == ["leaf"]


def test_walk_reports_done_only_after_a_root() -> None:
    walk: ThreadWalk[M] = ThreadWalk()
    assert walk.feed([M("3", "2")]) is False
    assert walk.feed([M("x", None), M("2", "1")]) is False
    assert walk.feed([M("1", None), M("0", None)]) is True
    assert ids(walk.thread) == ["3", "2", "1"]


@st.composite
def trees(draw: st.DrawFn) -> list[M]:
    """Random conversations, oldest first: each message's parent is an older one, None or NIL."""
    count = draw(st.integers(1, 30))
    messages: list[M] = []
    for index in range(count):
        choice = draw(st.integers(0, 9))
        if choice == 0 or not messages:
            parent = None
        elif choice == 1:
            parent = UUID_NIL
        else:
            parent = messages[draw(st.integers(0, len(messages) - 1))].message_id
        messages.append(M(f"m{index}", parent))
    return messages[::-1]


@given(trees(), st.integers(1, 7))
def test_paged_walk_equals_one_shot(messages: list[M], page: int) -> None:
    walk: ThreadWalk[M] = ThreadWalk()
    for start in range(0, len(messages), page):
        if walk.feed(messages[start : start + page]):
            break
    assert walk.thread == extract_thread(messages)


@given(trees())
def test_thread_is_a_parent_chain(messages: list[M]) -> None:
    thread = extract_thread(messages)
    assert thread[0] == messages[0]
    for child, parent in itertools.pairwise(thread):
        assert child.parent_message_id in (parent.message_id, UUID_NIL)
