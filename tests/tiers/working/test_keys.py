"""Pure key rules of working memory (RockBot's, with prefixes matching whole segments)."""

from __future__ import annotations

import pytest

from memstack.foundation.errors import InvalidKey
from memstack.tiers.working import keys as wkeys


@pytest.mark.parametrize(
    ("key", "namespace"),
    [
        ("session/abc/emails", "session/abc"),
        ("session/abc/emails/inbox", "session/abc"),
        ("a/b", "a/b"),
        ("a", "a"),
    ],
)
def test_namespace_is_first_two_segments(key: str, namespace: str) -> None:
    assert wkeys.namespace_of(key) == namespace


def test_keys_normalise_to_lower_case() -> None:
    assert wkeys.normalize_key("Patrol/HB/Emails") == "patrol/hb/emails"


def test_a_session_id_keeps_its_case_and_the_rest_folds() -> None:
    assert wkeys.normalize_key("Session/ABC/Emails") == "session/ABC/emails"
    assert wkeys.normalize_namespace("SESSION/Alice") == "session/Alice"
    assert wkeys.normalize_namespace("session/alice") != wkeys.normalize_namespace("session/Alice")
    assert wkeys.normalize_prefix("Session") == "session"
    assert wkeys.resolve_read("session/Alice", "Notes") == "session/Alice/notes"


@pytest.mark.parametrize("bad", ["", "a//b", "/a", "a/", "a b", "a\n", "x/{y}", 5, None, "a" * 513])
def test_bad_keys_are_refused_with_the_rule(bad: object) -> None:
    with pytest.raises(InvalidKey, match="working-memory key"):
        wkeys.normalize_key(bad)


@pytest.mark.parametrize("bad", ["session", "session/abc/x", "a//b"])
def test_namespace_binding_needs_two_segments(bad: str) -> None:
    with pytest.raises(InvalidKey):
        wkeys.normalize_namespace(bad)


def test_prefixes_match_whole_segments() -> None:
    assert wkeys.covers("session/s1", "session/s1/emails")
    assert wkeys.covers("session/s1", "session/s1")
    assert not wkeys.covers("session/s1", "session/s10/emails")
    assert wkeys.covers("", "anything/at/all")
    assert wkeys.normalize_prefix("Patrol/") == "patrol"
    assert wkeys.normalize_prefix("  ") == ""


def test_reads_resolve_plain_keys_into_the_own_namespace() -> None:
    assert wkeys.resolve_read("session/abc", "Notes") == "session/abc/notes"
    assert wkeys.resolve_read("session/abc", "patrol/hb/alert") == "patrol/hb/alert"


def test_writes_stay_in_the_own_namespace() -> None:
    assert wkeys.resolve_write("session/abc", "notes") == "session/abc/notes"
    assert wkeys.resolve_write("session/abc", "SESSION/abc/X/y") == "session/abc/x/y"
    with pytest.raises(InvalidKey, match="own namespace 'session/abc'"):
        wkeys.resolve_write("session/abc", "session/ABC/x")
    with pytest.raises(InvalidKey, match="own namespace 'session/abc'"):
        wkeys.resolve_write("session/abc", "patrol/hb/alert")


def test_user_namespaces_start_with_session() -> None:
    assert wkeys.is_user_namespace("Session/abc")
    assert not wkeys.is_user_namespace("patrol/heartbeat")
