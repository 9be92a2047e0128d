"""``KeyUnder``: a family's key under an object's stem, as the key-layout classes declare them."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from memstack.foundation.keyspace import KeyUnder, family_named


@dataclass(frozen=True, slots=True)
class _Keys:
    base: str

    version = KeyUnder("long_term.version")
    entries = KeyUnder("long_term.entry", prefix=True)


def test_a_key_is_the_stem_plus_the_family_tail() -> None:
    keys = _Keys("lt:{s}:")
    assert keys.version == "lt:{s}:" + family_named("long_term.version").tail == "lt:{s}:ver"
    assert keys.entries == "lt:{s}:" + family_named("long_term.entry").tail_prefix == "lt:{s}:e:"


def test_read_on_the_class_it_is_the_declaration() -> None:
    assert isinstance(_Keys.version, KeyUnder)
    assert _Keys.version.tail == "ver"


def test_an_unknown_family_fails_when_declared() -> None:
    with pytest.raises(KeyError):
        KeyUnder("long_term.nope")
