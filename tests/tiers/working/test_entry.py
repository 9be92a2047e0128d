"""Pure parts of working-memory entries: validation, filters, search text."""

from __future__ import annotations

import math

import pytest

from memstack.foundation.errors import InvalidCategory, InvalidValue
from memstack.tiers.working.entry import (
    WorkingEntry,
    category_matches,
    check_category,
    check_tags,
    check_ttl,
    decode_meta,
    document_text,
    dump_value,
    encode_meta,
    tags_match,
)


@pytest.mark.parametrize("ttl", [0, -1, math.nan, math.inf, "5", True])
def test_ttl_must_be_positive(ttl: object) -> None:
    with pytest.raises(InvalidValue, match="ttl"):
        check_ttl(ttl)


def test_ttl_rounds_up_to_whole_milliseconds() -> None:
    assert check_ttl(300) == 300_000
    assert check_ttl(0.0001) == 1


@pytest.mark.parametrize("bad", ["", "/a", "a/../b", "a b", "a//b", 3])
def test_bad_categories_are_refused(bad: object) -> None:
    with pytest.raises(InvalidCategory):
        check_category(bad)


def test_tags_are_stripped_and_blank_refused() -> None:
    assert check_tags([" inbox ", "unread"]) == ("inbox", "unread")
    assert check_tags(None) == ()
    with pytest.raises(InvalidValue):
        check_tags(["ok", " "])
    with pytest.raises(InvalidValue):
        check_tags("inbox")


def test_values_must_be_json() -> None:
    assert dump_value("123") == '"123"'
    with pytest.raises(InvalidValue, match="JSON"):
        dump_value({1, 2})
    with pytest.raises(InvalidValue):
        dump_value(math.nan)


def test_meta_round_trips() -> None:
    entry = decode_meta("s/a/k", encode_meta(2500, 1500, "c/d", ["x"]), '{"v":[1]}')
    assert entry == WorkingEntry("s/a/k", {"v": [1]}, 1.5, 2.5, "c/d", ("x",))
    assert entry.remaining(2.0) == 0.5
    assert entry.remaining(9.0) == 0.0


def test_category_filter_is_exact_or_sub_path() -> None:
    assert category_matches("project-context", "Project-Context/rockbot")
    assert category_matches("project-context", "project-context")
    assert not category_matches("project-context", "project-contextual")
    assert not category_matches("x", None)


def test_every_wanted_tag_must_be_present() -> None:
    assert tags_match(["INBOX"], ["inbox", "unread"])
    assert not tags_match(["inbox", "urgent"], ["inbox"])
    assert tags_match([], [])


def test_document_text_follows_spec_item_46() -> None:
    entry = WorkingEntry("session/abc/emails_in-box", "hello", 0, 1, "email/work-mail", ("a", "b"))
    assert document_text(entry) == "session abc emails in box hello a b email work mail"
    assert document_text(WorkingEntry("p/q/r", {"n": 1}, 0, 1)) == 'p q r {"n": 1}'
