"""Where working memory keeps its entries, from the keyspace registry (``T`` = ``engine.tag(namespace)``,
so one namespace is one Redis Cluster slot):

| key (family ``working.…``) | type | holds |
|---|---|---|
| ``wm:T:m`` (``meta``) | hash | full key → meta JSON (expiry, store time, category, tags, label) |
| ``wm:T:d`` (``data``) | hash | full key → value JSON |
| ``wm:T:v`` (``version``) | string | the namespace version, a fresh random token on every write |
| ``wm:R:ns:{top}`` (``namespaces``) | set | the namespaces under a top segment |
| ``wm:R:tops`` (``tops``) | set | the top segments |

``R`` is ``engine.tag("wm")``: the registry is one slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ...engines import Engine
from ...foundation.keyspace import family_named
from ...foundation.keyspace.families import WORKING, WORKING_REGISTRY

__all__ = ["PREFIX", "NamespaceKeys", "RegistryKeys"]

PREFIX: Final = WORKING.lead
_META, _DATA = family_named("working.meta").tail, family_named("working.data").tail
_VERSION = family_named("working.version").tail
_NAMESPACES, _TOPS = family_named("working.namespaces"), family_named("working.tops")


@dataclass(frozen=True, slots=True)
class NamespaceKeys:
    """The three keys of one namespace."""

    meta: str
    data: str
    version: str

    @classmethod
    def of(cls, engine: Engine, namespace: str) -> NamespaceKeys:
        base = WORKING.render(engine.tag, namespace=namespace)
        return cls(base + _META, base + _DATA, base + _VERSION)


@dataclass(frozen=True, slots=True)
class RegistryKeys:
    """The registry of namespaces (one slot): ``tops`` and the set of each top segment."""

    tops: str
    _tag: str

    @classmethod
    def of(cls, engine: Engine) -> RegistryKeys:
        return cls(_TOPS.key(engine.tag), WORKING_REGISTRY.render(engine.tag))

    def namespaces(self, top: str) -> str:
        """The set of the namespaces under ``top``."""
        return self._tag + _NAMESPACES.tail_prefix + top
