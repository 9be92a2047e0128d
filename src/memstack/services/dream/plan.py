"""Plans: what a pass will do to a scope (entries to retire, entries to create with their sources,
and the entries each new one supersedes).

Pure functions turn a parsed model answer (or a list of duplicate groups) into a :class:`Plan`;
:func:`check_plan` applies the guard rails of :data:`GUARD_RAILS`. Drivers apply plans
(:mod:`.apply`). Where one entry replaces another (a consolidation merging or refining entries,
an extracted fact updating a known one) the old entry is superseded, not retired: it stays, with
``valid_to`` and ``superseded_by``, and its history says why it is no longer current.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final

from ...foundation.errors import DreamRefused
from ...tiers.longterm import MemoryEntry
from ...tiers.longterm.similar import normalise_text
from ...tiers.longterm.validate import check_category, check_content, check_metadata, check_tags, new_id
from .parse import ProposedEntry, ProposedItem

__all__ = [
    "DEFAULT_PREFERENCE_CATEGORY",
    "GUARD_RAILS",
    "INFERRED_TAG",
    "NewEntry",
    "Plan",
    "check_plan",
    "consolidation_plan",
    "dedupe_plan",
    "preference_plan",
    "proposed_category",
    "proposed_entry",
]

DEFAULT_PREFERENCE_CATEGORY: Final = "user-preferences/inferred"
INFERRED_TAG: Final = "inferred"

GUARD_RAILS: Final[dict[str, Any]] = {
    "max_retired_share": 0.5,  # a plan may remove at most this share of a scope's entries
    "refuse_only_unknown": True,  # a plan naming ids, none of which exist, is a confused model
}
"""The guard rails every plan passes unless forced (:func:`check_plan`)."""


@dataclass(frozen=True, slots=True)
class NewEntry:
    """An entry a plan creates, the ids of the entries it comes from (``source_ids``), those of
    them it supersedes (``supersedes``) and the conversation messages it was said in
    (``message_ids``, the extract pass's provenance)."""

    entry: MemoryEntry
    source_ids: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    message_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Plan:
    """What one pass will do.

    Attributes:
        kind: ``consolidate``, ``preferences``, ``dedupe``, ``expand`` or ``extract``.
        retire: ids of existing entries to move to the archive (lower case, no repeats).
        create: entries to write (an id may be one of ``retire``: an entry rewritten in place);
            each may supersede existing entries (never one of ``retire``, each by one entry).
        unknown: ids the answer named that the scope did not hold (harmless no-ops).
        dropped: answer items left out (blank content, repeats of an earlier item, duplicates of
            what the scope knows).
        basis: the retired and superseded entries as the plan saw them; applying refuses to
            change one that changed since (the plan was made from stale text).
    """

    kind: str
    retire: tuple[str, ...] = ()
    create: tuple[NewEntry, ...] = ()
    unknown: tuple[str, ...] = ()
    dropped: int = 0
    basis: tuple[MemoryEntry, ...] = ()

    @property
    def superseded(self) -> tuple[str, ...]:
        """Ids of the entries the new ones supersede, in order."""
        return tuple(i for n in self.create for i in n.supersedes)

    @property
    def removed(self) -> int:
        """Current entries the scope loses: retired and not re-created under the same id, or
        superseded."""
        kept = {n.entry.id for n in self.create}
        return sum(1 for i in self.retire if i not in kept) + len(self.superseded)

    @property
    def empty(self) -> bool:
        return not self.retire and not self.create


def check_plan(plan: Plan, scope_size: int, *, force: bool = False) -> None:
    """Refuse a plan that breaks a guard rail (unless ``force``).

    ``scope_size`` counts the scope's current entries (superseded and expired ones are no longer
    current: a plan cannot remove them again).

    Raises:
        DreamRefused: more than half of the scope removed (retired or superseded), or only unknown
            ids named.
    """
    if force:
        return
    share = GUARD_RAILS["max_retired_share"]
    if scope_size and plan.removed > share * scope_size:
        raise DreamRefused(
            f"{plan.kind} plan removes {plan.removed} of {scope_size} entries: more than "
            f"{share:.0%} of a scope needs force=True"
        )
    if GUARD_RAILS["refuse_only_unknown"] and plan.unknown and not plan.retire and not plan.superseded:
        raise DreamRefused(
            f"{plan.kind} plan names only unknown ids ({', '.join(plan.unknown[:5])}"
            f"{'…' if len(plan.unknown) > 5 else ''}): refused unless force=True"
        )


def proposed_category(value: str | None) -> str | None:
    """A proposed category, trimmed and checked; None for none or a blank one."""
    return check_category(value.strip()) if value is not None and value.strip() else None


def proposed_entry(
    item: ProposedItem,
    now: datetime,
    make_id: Callable[[], str],
    *,
    tags: Sequence[str] | None = None,
    default_category: str | None = None,
    **fields: Any,
) -> MemoryEntry:
    """A new entry from what a model proposed: a fresh id, the content trimmed, then content,
    category and tags checked (``tags`` in place of the item's own); ``fields`` set the rest.

    Raises:
        InvalidValue, InvalidCategory: the item breaks an entry rule.
    """
    return MemoryEntry(
        id=make_id(),
        content=check_content(item.content.strip()),
        category=proposed_category(item.category) or default_category,
        tags=check_tags(list(item.tags if tags is None else tags)),
        created_at=now,
        **fields,
    )


def consolidation_plan(
    inputs: Sequence[MemoryEntry],
    to_delete: Sequence[str],
    to_save: Sequence[ProposedEntry],
    now: datetime,
    *,
    kind: str = "consolidate",
    make_id: Callable[[], str] = new_id,
    supersede: bool = True,
) -> Plan:
    """The plan of a consolidation answer.

    Every id of ``to_delete`` and every item's source id that is among ``inputs`` (matched
    case-insensitively; other ids are reported in ``unknown``) leaves the current entries. With
    ``supersede`` (the consolidation pass), a source of a new item is superseded by the first
    item naming it (valid from now: what the scope held until the pass stays what ``as_of``
    shows), and only the ids of ``to_delete`` that no item replaces are retired; without it (the
    ``save_memory`` expansion, a rewrite of one note) every one is retired. Each non-blank item
    becomes a new entry created at the oldest known source's time (now when none is known).
    Items repeating an earlier item (same normalised content and category) are merged into it.

    Raises:
        InvalidValue, InvalidCategory: an item breaks an entry rule (too long, bad tags, bad path).
    """
    known = {e.id.lower(): e for e in inputs}
    named = _named_ids([*to_delete, *(s for item in to_save for s in item.source_ids)])
    gone = tuple(i for i in named if i in known)
    unknown = tuple(i for i in named if i not in known)
    created, dropped = _new_entries(to_save, known, now, make_id)
    if not supersede:
        return Plan(kind, gone, created, unknown, dropped, tuple(known[i] for i in gone))
    made, replaced = [], set[str]()
    for new in created:
        mine = tuple(i for i in new.source_ids if i in known and i not in replaced)
        replaced.update(mine)
        entry = replace(new.entry, given_valid_from=now) if mine else new.entry
        made.append(NewEntry(entry, new.source_ids, mine))
    retire = tuple(i for i in gone if i not in replaced)
    return Plan(kind, retire, tuple(made), unknown, dropped, tuple(known[i] for i in gone))


def _named_ids(ids: Sequence[str]) -> tuple[str, ...]:
    """``ids`` trimmed and lower-cased, blanks and repeats left out, in order."""
    return tuple(dict.fromkeys(i.strip().lower() for i in ids if i.strip()))


def _new_entries(
    to_save: Sequence[ProposedEntry],
    known: dict[str, MemoryEntry],
    now: datetime,
    make_id: Callable[[], str],
) -> tuple[tuple[NewEntry, ...], int]:
    """The entries of the non-blank items, an item repeating an earlier one (same normalised
    content and category) merged into it; and how many items were dropped so."""

    def key_of(item: ProposedEntry) -> tuple[str, str | None]:
        category = proposed_category(item.category)
        return normalise_text(item.content), None if category is None else category.lower()

    def new(item: ProposedEntry) -> NewEntry:
        entry = proposed_entry(item, now, make_id, updated_at=now)
        return _with_sources(NewEntry(entry, ()), _named_ids(item.source_ids), known, now)

    def again(earlier: NewEntry, item: ProposedEntry) -> NewEntry:
        merged = tuple(dict.fromkeys([*earlier.source_ids, *_named_ids(item.source_ids)]))
        return _with_sources(earlier, merged, known, now)

    return _fold(to_save, key_of, new, again)


def _fold(
    to_save: Sequence[ProposedEntry],
    key_of: Callable[[ProposedEntry], Hashable],
    new: Callable[[ProposedEntry], NewEntry],
    again: Callable[[NewEntry, ProposedEntry], NewEntry],
) -> tuple[tuple[NewEntry, ...], int]:
    """One entry per distinct key of the non-blank items, in order: ``new`` of the first item with
    a key, ``again`` of the entry so far and each later one; and how many items were dropped (the
    blank ones and the repeats)."""
    created: dict[Hashable, NewEntry] = {}
    dropped = 0
    for item in to_save:
        if not item.content.strip():
            dropped += 1
            continue
        key = key_of(item)
        if key in created:
            dropped += 1
            created[key] = again(created[key], item)
        else:
            created[key] = new(item)
    return tuple(created.values()), dropped


def _with_sources(
    new: NewEntry, sources: tuple[str, ...], known: dict[str, MemoryEntry], now: datetime
) -> NewEntry:
    times = [known[s].created_at for s in sources if s in known]
    return NewEntry(replace(new.entry, created_at=min(times, default=now)), sources)


def preference_plan(
    to_save: Sequence[ProposedEntry], now: datetime, *, make_id: Callable[[], str] = new_id
) -> Plan:
    """The plan of a preference answer: ``inferred`` tag first, ``source=inferred``.

    Raises:
        InvalidValue, InvalidCategory: an item breaks an entry rule.
    """

    def new(item: ProposedEntry) -> NewEntry:
        tags = list(item.tags)
        if not any(t.lower() == INFERRED_TAG for t in tags):
            tags.insert(0, INFERRED_TAG)
        metadata = {k: v for k, v in (item.metadata or {}).items() if str(k).lower() != "source"}
        metadata["source"] = "inferred"
        entry = proposed_entry(
            item,
            now,
            make_id,
            tags=tags,
            default_category=DEFAULT_PREFERENCE_CATEGORY,
            updated_at=now,
            metadata=check_metadata(metadata),
        )
        return NewEntry(entry)

    created, dropped = _fold(
        to_save, lambda item: normalise_text(item.content), new, lambda earlier, _: earlier
    )
    return Plan("preferences", (), created, (), dropped)


def dedupe_plan(groups: Sequence[Sequence[MemoryEntry]], now: datetime) -> Plan:
    """Merge each group of duplicates into its oldest entry (same id, tags merged, ``updated_at``
    now, created at the group's oldest time); the others are retired."""
    retire: list[str] = []
    create: list[NewEntry] = []
    for group in groups:
        survivor = group[0]
        tags: dict[str, str] = {}
        for entry in group:
            for tag in entry.tags:
                tags.setdefault(tag.lower(), tag)
        retire.extend(e.id for e in group)
        merged = replace(
            survivor.copy(),
            tags=tuple(tags.values()),
            created_at=min(e.created_at for e in group),
            updated_at=now,
        )
        create.append(NewEntry(merged, tuple(e.id for e in group)))
    return Plan("dedupe", tuple(retire), tuple(create), basis=tuple(e for g in groups for e in g))
