"""Which family a stored record belongs to: the registry read backwards.

Used by the forget verification (a record of a forgotten scope is a trace) and by the test that
fails when any test of the suite writes a key no family declares.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final

from .families import FAMILIES
from .family import Family
from .tenants import split_tenant

__all__ = ["Found", "family_named", "family_of"]

Found = tuple[Family, Mapping[str, str]]
"""A family and the parts of the key (hash tags unwrapped)."""

_BY_NAME: Final = {family.name: family for family in FAMILIES}


def _lead(family: Family) -> str:
    """The literal text every key of the family starts with (the first hole ends it)."""
    text = family.stem.text + family.tail
    cut = min((i for i in (text.find("<"), text.find("{")) if i >= 0), default=len(text))
    return text[:cut]


_LEADS: Final = tuple((_lead(f), f) for f in FAMILIES)


def family_named(name: str) -> Family:
    """The family called ``name``.

    Raises:
        KeyError: no such family.
    """
    return _BY_NAME[name]


@functools.lru_cache(maxsize=65536)
def _classify(key: str) -> Found | None:
    for lead, family in _LEADS:
        if key.startswith(lead):
            parts = family.match(key)
            if parts is not None:
                return family, parts
    return None


def family_of(key: str) -> tuple[str | None, Found | None]:
    """``(tenant, (family, parts))`` of an engine key or raw record name (``events:12``); the
    family is None when no family declares the key."""
    tenant, inner = split_tenant(key)
    return tenant, _classify(inner)
