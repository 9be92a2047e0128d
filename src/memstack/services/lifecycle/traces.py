"""Traces of a forgotten selector outside the records a tier forgets: the engine's own records.

A :class:`Trace` is the set of texts that mark the selector's data in any stored record: the key
stems of every family scoped by it (``rr:memory:s1:``, ``shared:m:board:``...), a subject's label
as the labelled families write it, and the exact keys a subject's forget removed. The records an
engine keeps for itself (SQLite's change events, Redis' batch replies) carrying one are dropped
(:func:`purge`); :func:`carried` counts those left, and :func:`audit` reads the whole keyspace
(:meth:`~memstack.engines.base.Engine.raw_items`) for any record carrying one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from ...engines import Engine
from ...engines.prefixed import PrefixedEngine
from ...foundation.keyspace import STEMS
from ...foundation.keyspace.subjects import LABEL, subject_key
from ...tiers.working.forget import session_namespace

__all__ = ["Trace", "audit", "carried", "purge"]

_STEMS_OF: Final = {
    "session": (("session", "session"), ("injected", "session")),
    "conversation": (("conversation", "conversation"),),
    "scope": (("long_term", "scope"), ("dream", "scope")),
    "board": (("shared", "board"), ("cache", "board"), ("documents", "board")),
    "namespace": (("working", "namespace"),),
    "subject": (("subject", "subject"),),
}
"""For each selector: the stems (by name) its value fills, and the part it fills."""
_LABEL_FIELDS: Final = (LABEL, "s", "ps")
"""The JSON fields a subject label travels in (versions; a shared change's new and previous)."""


def _whole(key: str) -> tuple[str, ...]:
    """The needles of ``key``: as it is when it ends with a separator (``lt:alice:``), else ended
    as a record's text ends a key, by a new line or a JSON quote (``lt:~inj:s1`` never marks
    ``lt:~inj:s10``)."""
    return (key,) if key.endswith((":", "}")) else (key + "\n", key + '"')


@dataclass(frozen=True, slots=True)
class Trace:
    """The texts marking one selector's data (see the module docstring). On a tenant's view, a
    record carries the trace only when it also names the tenant's prefix (every key the tenant's
    batches touch, every channel it publishes on, does): another tenant's records stay."""

    needles: frozenset[str]
    tenant: str = ""
    _any: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # one alternation: a scan of the whole keyspace tests every record against every needle
        pattern = "|".join(re.escape(n) for n in sorted(self.needles, key=len, reverse=True))
        object.__setattr__(self, "_any", re.compile(pattern or "(?!)"))

    @classmethod
    def of(cls, engine: Engine, kind: str, value: str, extra: Iterable[str] = ()) -> Trace:
        """The trace of selector ``kind`` = ``value`` on ``engine`` (``extra``: more texts, e.g.
        the keys a subject's forget removed)."""
        tenant = engine.prefix if isinstance(engine, PrefixedEngine) else ""
        stems = [STEMS[stem].render(engine.tag, **{part: value}) for stem, part in _STEMS_OF[kind]]
        needles = {needle for stem in stems for needle in _whole(stem)}
        if kind == "session":
            # a window's scope ends with its session id; a turn list's key with it
            needles |= {f"__{value}:", f"__{value}}}", *_whole(f":s:{value}"), f'"session_id": "{value}"'}
            namespace = session_namespace(value)
            if namespace is not None:
                needles.add(STEMS["working"].render(engine.tag, namespace=namespace))
        if kind == "subject":
            needles.add(subject_key(engine, value))
            needles |= {f'"{field}":{sep}"{value}"' for field in _LABEL_FIELDS for sep in ("", " ")}
        return cls(frozenset(needles | {needle for key in extra for needle in _whole(key)}), tenant)

    def carries(self, text: str) -> bool:
        """True when ``text`` holds one of the needles (JSON's escaped ``/`` read as ``/``)."""
        plain = text.replace("\\/", "/") if "\\/" in text else text
        if self.tenant and self.tenant not in plain:
            return False
        return self._any.search(plain) is not None


def _any(trail: Sequence[Trace], text: str) -> bool:
    return any(trace.carries(text) for trace in trail)


def purge(engine: Engine, trail: Sequence[Trace]) -> int:
    """Drop the engine's own records carrying one of the traces; returns how many."""
    doomed = [where for where, text in engine.internal_items() if _any(trail, text)]
    return engine.drop_internal(doomed) if doomed else 0


def carried(engine: Engine, trail: Sequence[Trace]) -> int:
    """The engine's own records still carrying one of the traces."""
    return sum(1 for _, text in engine.internal_items() if _any(trail, text))


def audit(engine: Engine, trail: Sequence[Trace]) -> int:
    """Every record of the whole keyspace (every key, value and internal record of every tenant)
    still carrying one of the traces: slow, it reads everything the engine stores."""
    return sum(1 for _, text in engine.raw_items() if _any(trail, text))
