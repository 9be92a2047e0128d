"""Pure rules of the long-term tier: ids, scopes, categories, tags, content, metadata, times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from memstack.foundation.errors import InvalidCategory, InvalidKey, InvalidSessionId, InvalidValue
from memstack.tiers.longterm.entry import MemoryEntry, entry_from_dict, entry_to_dict, from_json, to_json
from memstack.tiers.longterm.validate import (
    check_category,
    check_content,
    check_metadata,
    check_scope,
    check_session_id,
    check_tags,
    check_time,
    new_id,
    normalise_id,
)


def test_new_id_is_12_lowercase_hex() -> None:
    ids = {new_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(len(i) == 12 and all(c in "0123456789abcdef" for c in i) for i in ids)


@pytest.mark.parametrize("category", ["general", "user-preferences/music", "a/b_c/D-9"])
def test_valid_categories(category: str) -> None:
    assert check_category(category) == category


@pytest.mark.parametrize(
    ("category", "rule"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("/etc/passwd", "relative"),
        ("\\windows", "relative"),
        ("C:stuff", "relative"),
        ("a/../b", "'..'"),
        ("..", "'..'"),
        ("a//b", "segment"),
        ("a/", "segment"),
        ("a b", "segment"),
        ("a/b.c", "segment"),
        ("music/jazz\n", "segment"),
    ],
)
def test_invalid_categories_name_value_and_rule(category: str, rule: str) -> None:
    with pytest.raises(InvalidCategory, match=rule) as info:
        check_category(category)
    assert repr(category) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_none_category_allowed() -> None:
    assert check_category(None) is None


def test_ids_are_case_insensitive_and_file_safe() -> None:
    assert normalise_id("ABCdef012345") == "abcdef012345"
    for bad in ["", ".hidden", "a/b", "..", "a b", "x" * 129, "é"]:
        with pytest.raises(InvalidKey):
            normalise_id(bad)


def test_scope_rule() -> None:
    assert check_scope("alice@example.com") == "alice@example.com"
    for bad in ["", "a:b", "{a}", "a~b", "a" * 129, "a\n"]:
        with pytest.raises(InvalidKey, match="scope"):
            check_scope(bad)


def test_session_id_rule() -> None:
    assert check_session_id("s-1_A") == "s-1_A"
    with pytest.raises(InvalidSessionId):
        check_session_id("abc\n")


def test_content_must_be_non_blank() -> None:
    assert check_content(" x ") == " x "
    for bad in ["", "  \n", None, 3]:
        with pytest.raises(InvalidValue, match="content"):
            check_content(bad)


def test_tags_split_strip_and_drop_blanks() -> None:
    assert check_tags("a, b ,,c") == ("a", "b", "c")
    assert check_tags(["x", " y ", ""]) == ("x", "y")
    assert check_tags(None) == ()
    with pytest.raises(InvalidValue):
        check_tags([1])  # type: ignore[list-item]  # the point: a non-string tag


def test_metadata_is_copied_json() -> None:
    original = {"a": [1, 2]}
    copied = check_metadata(original)
    assert copied == original
    assert copied is not original
    with pytest.raises(InvalidValue):
        check_metadata({"x": float("nan")})
    with pytest.raises(InvalidValue):
        check_metadata({"x": object()})
    with pytest.raises(InvalidValue):
        check_metadata({1: "x"})


def test_times_must_be_aware_and_become_utc() -> None:
    plus2 = timezone(timedelta(hours=2))
    assert check_time(datetime(2024, 1, 1, 12, tzinfo=plus2), "t") == datetime(2024, 1, 1, 10, tzinfo=UTC)
    assert check_time(0, "t") == datetime(1970, 1, 1, tzinfo=UTC)
    with pytest.raises(InvalidValue, match="timezone-aware"):
        check_time(datetime(2024, 1, 1), "created_at")  # the point: a naive datetime


def test_entry_json_round_trip_and_case_insensitive_fields() -> None:
    entry = MemoryEntry(
        id="abc",
        content="c",
        category="x/y",
        tags=("t",),
        created_at=datetime(2024, 5, 1, 1, 2, 3, 456789, tzinfo=UTC),
        updated_at=datetime(2024, 5, 2, tzinfo=UTC),
        metadata={"k": {"n": 1}},
    )
    assert from_json(to_json(entry)) == entry
    data = {k.upper(): v for k, v in entry_to_dict(entry).items()}
    assert entry_from_dict(data) == entry
    assert list(entry_to_dict(entry)) == [
        "id", "content", "category", "tags", "createdAt", "updatedAt", "metadata"
    ]  # fmt: skip


def test_entry_copy_gives_own_metadata() -> None:
    entry = MemoryEntry(id="a", content="c", metadata={"k": [1]})
    copied = entry.copy()
    assert copied == entry
    assert copied.metadata is not entry.metadata


@pytest.mark.parametrize(
    "data",
    [[], {"id": 1, "content": "x", "createdAt": "2024-01-01T00:00:00+00:00"}, {"id": "a", "content": "x"},
     {"id": "a", "content": "x", "createdAt": "yesterday"},
     {"id": "a", "content": "x", "createdAt": "2024-01-01T00:00:00+00:00", "tags": "a"}],
)  # fmt: skip
def test_malformed_entry_dicts_raise(data: object) -> None:
    with pytest.raises(InvalidValue):
        entry_from_dict(data)
