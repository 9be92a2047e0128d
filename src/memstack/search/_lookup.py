"""Profiles are tables: one lookup rule for every table of them (BM25, tokeniser, fusion)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from memstack.foundation.errors import InvalidConfiguration

T = TypeVar("T")


def lookup(table: Mapping[str, T], profile: str | T, kind: type[T], what: str) -> T:
    """``profile`` itself when it is already a ``kind``, else the table's entry of that name.

    Raises:
        InvalidConfiguration: an unknown name (the message lists the known ones).
    """
    if isinstance(profile, kind):
        return profile
    found = table.get(profile) if isinstance(profile, str) else None
    if found is None:
        raise InvalidConfiguration(f"{what} profile {profile!r} is unknown; known: {sorted(table)}")
    return found
