"""Glob patterns of subscriptions: real glob semantics, everything else literal."""

from __future__ import annotations

import fnmatch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstack.tiers.shared.glob import glob_match


@pytest.mark.parametrize(
    ("pattern", "key", "expected"),
    [
        ("analysis:*", "analysis:sentiment", True),
        ("analysis:*", "analysis:", True),
        ("analysis:*", "xanalysis:sentiment", False),
        ("step?", "step1", True),
        ("step?", "step10", False),
        ("step?", "step", False),
        ("[ab]x", "ax", True),
        ("[ab]x", "bx", True),
        ("[ab]x", "cx", False),
        ("[!ab]x", "cx", True),
        ("[!ab]x", "ax", False),
        ("[^ab]x", "cx", True),
        ("v[0-9]", "v7", True),
        ("v[0-9]", "vx", False),
        ("[]]", "]", True),
        ("a.b", "a.b", True),
        ("a.b", "axb", False),
        ("a+b", "a+b", True),
        ("a+b", "aab", False),
        ("(x|y)", "(x|y)", True),
        ("(x|y)", "x", False),
        ("^k$", "^k$", True),
        ("^k$", "k", False),
        ("a\\b", "a\\b", False),  # backslash escapes the next character: pattern means "ab"
        ("a\\*", "a*", True),
        ("a\\*", "ab", False),
        ("[unclosed", "[unclosed", True),
        ("*", "line\nbreak", True),
        ("x{1,2}", "x{1,2}", True),
        ("x{1,2}", "x", False),
        ("[b-a]", "a", False),
        ("[!b-a]", "a", True),
        ("[a-]", "-", True),
    ],
)
def test_glob_semantics(pattern: str, key: str, expected: bool) -> None:
    assert glob_match(pattern, key) is expected


@given(
    pattern=st.text(alphabet="ab*?[]!-.+(", max_size=8) | st.text(alphabet="ab[]!-", max_size=6),
    key=st.text(alphabet="ab.+(-]![", max_size=8) | st.text(alphabet="ab-]!", max_size=3),
)
def test_agrees_with_fnmatch_where_both_define_it(pattern: str, key: str) -> None:
    # fnmatch has the same *, ?, [...] and [!...] rules; it differs only on '\\' and '[^'.
    assert glob_match(pattern, key) is fnmatch.fnmatchcase(key, pattern)
