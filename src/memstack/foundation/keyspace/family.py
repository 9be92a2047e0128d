"""``Family``: one kind of record memstack stores, with its owner, its key pattern and its forget rule.

The forget rules (:data:`RULES`) say what a forget does to a family's records:

| rule | records | a forget |
|---|---|---|
| ``scope`` | belong to one scope (their key names it) | of that scope removes them |
| ``members`` | a shared index or log naming many scopes | removes the scope's members, keeps the rest |
| ``carrier`` | the engine's own records (events, batch replies) | removes those carrying forgotten data |
| ``lease`` | a short-lived lock of one scope | of that scope removes it (it also expires) |
| ``tenant`` | no selector reaches them (API keys, the LangGraph store) | only a tenant purge does |
| ``keep`` | engine bookkeeping that holds no user data | nothing |

``labelled`` families keep a subject label on every value version they store (the end user the
version is about): ``forget(subject=…)`` removes the versions labelled with it and leaves a
version someone else wrote over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from ..errors import InvalidConfiguration
from .pattern import Pattern, Tag

__all__ = ["KINDS", "ROLES", "RULES", "Family", "Stem"]

KINDS: Final = ("string", "hash", "set", "list", "zset", "channel", "row")
"""What a record is: an engine key of one type, a pub/sub channel, or a row an engine keeps for
itself (SQLite's change events, Redis' batch replies)."""

ROLES: Final = (
    "value",
    "index",
    "registry",
    "counter",
    "log",
    "event",
    "snapshot",
    "vector",
    "archive",
    "cache",
    "document",
    "feedback",
    "lease",
    "reply",
    "statistics",
)
"""What a record is for: primary data (``value``, ``document``, ``feedback``, ``cache``) or
derived from it (indexes, registries, counters, change logs, events, snapshots, vectors,
archives, leases, batch replies, statistics)."""

RULES: Final = ("scope", "members", "carrier", "lease", "tenant", "keep")
"""The forget rules of the module docstring."""


@dataclass(frozen=True, slots=True)
class Stem:
    """The pattern every key of one scope of one tier starts with (``lt:<scope>:``)."""

    text: str
    pattern: Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", Pattern(self.text))

    @property
    def lead(self) -> str:
        """The literal text every key of the stem starts with (``lt:``): the tier's prefix."""
        return self.pattern.lead

    def render(self, tag: Tag, **values: str) -> str:
        """The stem with its parts filled in (``lt:alice:``)."""
        return self.pattern.render(tag, **values)


@dataclass(frozen=True, slots=True)
class Family:
    """One family of records (see the module docstring).

    Attributes:
        name: ``{owner}.{what}``, unique.
        owner: the tier that writes the records (a report tier of :mod:`memstack.services.lifecycle`).
        stem: the scope's stem the key starts with (empty for global records).
        tail: the rest of the pattern after the stem.
        kind: one of :data:`KINDS`.
        role: one of :data:`ROLES`.
        rule: the forget rule, one of :data:`RULES`.
        labelled: value versions carry a subject label.
        members: what the members, fields or entries of a shared record name (``session``,
            ``entry``, ``namespace``, ``object``...), for the ``members`` rule.
        part: the part naming the record's scope, when it is not the first ``<scope part>``
            (the turn log keeps every session under one constant tag).
        doc: what the records hold, in a few words.
    """

    name: str
    owner: str
    stem: Stem
    tail: str
    kind: str
    role: str
    rule: str
    labelled: bool = False
    members: str | None = None
    part: str | None = None
    doc: str = ""
    pattern: Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS or self.role not in ROLES or self.rule not in RULES:
            raise InvalidConfiguration(f"keyspace family {self.name}: bad kind, role or rule")
        object.__setattr__(self, "pattern", Pattern(self.stem.text + self.tail))

    @property
    def scope(self) -> str | None:
        """The name of the family's scope part (``session``, ``scope``, ``board``...); None for a
        global record."""
        return self.part or self.pattern.scope

    @property
    def tail_prefix(self) -> str:
        """The literal start of the tail: ``e:`` of ``e:{id}`` (a stem plus it plus an id is a key)."""
        return Pattern(self.tail).lead

    def key(self, tag: Tag, **values: str) -> str:
        """The key of the record with these parts."""
        return self.pattern.render(tag, **values)

    def prefix(self, tag: Tag, **values: str) -> str:
        """What every key of the family with these parts starts with (to scan or to extend)."""
        return self.pattern.prefix(tag, **values)

    def match(self, key: str) -> dict[str, str] | None:
        """The parts of ``key`` when it is one of this family's keys, else None."""
        return self.pattern.match(key)
