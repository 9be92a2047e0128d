"""``forget(subject=…)``: every object registered for the subject
(:mod:`~memstack.foundation.keyspace.subjects`), each checked against its own label.

A session or conversation labelled at creation goes whole (every tier's session or conversation
steps). A value, entry, document, cache entry or feedback signal goes only when its CURRENT version
carries the subject's label: a version someone else wrote over it stays theirs. The dream records
of every scope the subject wrote to lose the records holding a copy of one of their versions.
Each member leaves the subject's set once its object is handled, so a re-run goes on where a crash
stopped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ...engines import Engine
from ...engines.bulk import BATCH_KEYS
from ...foundation.keyspace import family_named
from ...foundation.keyspace.subjects import OBJECTS, subject_key
from ...tiers.conversation.activity import activity_key
from ...tiers.longterm import forget as long_term
from ...tiers.longterm.layout import ScopeKeys
from ...tiers.shared import forget as shared
from ...tiers.working import forget as working
from ..dream import forget as dream
from .plans import CHECKS_LEFT, PLANS, Counts

__all__ = ["Walk", "forget_subject", "subject_leftovers"]


@dataclass
class Walk:
    """What a subject's forget did: counts per tier, the keys of the subject's objects (the batch
    replies naming them carry the subject's data: the trace) and the objects it checked (for the
    verification)."""

    counts: Counts = field(default_factory=dict)
    removed_keys: set[str] = field(default_factory=set)
    objects: dict[str, list[tuple[str, ...]]] = field(default_factory=lambda: defaultdict(list))

    def add(self, more: Mapping[str, int]) -> None:
        for tier, count in more.items():
            self.counts[tier] = self.counts.get(tier, 0) + count


def _members(engine: Engine, subject: str) -> dict[str, list[tuple[str, ...]]]:
    grouped: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for name in sorted(engine.smembers(subject_key(engine, subject))):
        kind, *parts = name.split("\t")
        if kind in OBJECTS:
            grouped[kind].append(tuple(parts))
    return grouped


def _release(engine: Engine, subject: str, kind: str, refs: list[tuple[str, ...]]) -> int:
    names = ["\t".join((kind, *ref)) for ref in refs]
    key = subject_key(engine, subject)
    return sum(int(engine.srem(key, *names[i : i + BATCH_KEYS])) for i in range(0, len(names), BATCH_KEYS))


def _by_first(refs: list[tuple[str, ...]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for ref in refs:
        if len(ref) == 2:
            out[ref[0]].append(ref[1])
    return out


def forget_subject(engine: Engine, subject: str) -> Walk:
    """Forget everything about ``subject`` (see the module docstring)."""
    walk = Walk()
    for kind, refs in sorted(_members(engine, subject).items()):
        walk.objects[kind] = refs
        if kind in ("session", "conversation"):
            for (object_id,) in (r for r in refs if len(r) == 1):
                for step in PLANS[kind]:
                    walk.add(step(engine, object_id))
        elif kind == "long_term":
            for scope, ids in sorted(_by_first(refs).items()):
                counts, _ = long_term.forget_owned(engine, subject, scope, ids)
                walk.add(counts)
                layout = ScopeKeys.of(engine, scope)
                walk.removed_keys |= {layout.entry(i) for i in ids}  # retired ones' batches name them too
                walk.removed_keys |= {layout.history(i) for i in ids}
                walk.add(dream.forget_records(engine, scope, subject))
        elif kind == "working":
            for namespace, entries in sorted(_by_first(refs).items()):
                walk.add(working.forget_owned(engine, subject, namespace, entries))
        elif kind in ("shared", "cache", "document"):
            for board, names in sorted(_by_first(refs).items()):
                walk.add(shared.forget_owned(engine, subject, kind, board, names))
                walk.removed_keys |= set(shared.object_keys(engine, kind, board, names))
        elif kind == "feedback":
            for (scope,) in (r for r in refs if len(r) == 1):
                walk.add(dream.forget_feedback(engine, scope, subject))
                walk.add(dream.forget_records(engine, scope, subject))
        walk.add({"subject_index": _release(engine, subject, kind, refs)})
    # The index of their conversations' newest turns names conversations of theirs: it goes too.
    # So do the notes of their remembered turns not indexed yet (they name conversations too).
    pending = family_named("subject.pending").key(engine.tag, subject=subject)
    walk.add({"subject_index": int(engine.delete(activity_key(engine, subject), pending))})
    return walk


def _owned_left(engine: Engine, subject: str, kind: str, refs: list[tuple[str, ...]]) -> int:
    checks: Mapping[str, Callable[[str, list[str]], int]] = {
        "long_term": lambda scope, ids: (
            long_term.owned_left(engine, subject, scope, ids)
            + dream.records_leftovers(engine, scope, subject)
        ),
        "working": lambda namespace, keys: working.owned_left(engine, subject, namespace, keys),
        "shared": lambda board, keys: shared.owned_left(engine, subject, "shared", board, keys),
        "cache": lambda board, ids: shared.owned_left(engine, subject, "cache", board, ids),
        "document": lambda board, keys: shared.owned_left(engine, subject, "document", board, keys),
    }
    if kind in ("session", "conversation"):
        return sum(check(engine, r[0]) for r in refs if len(r) == 1 for check in CHECKS_LEFT[kind])
    if kind == "feedback":
        return sum(
            dream.feedback_leftovers(engine, r[0], subject) + dream.records_leftovers(engine, r[0], subject)
            for r in refs
            if len(r) == 1
        )
    check = checks.get(kind)
    return 0 if check is None else sum(check(first, names) for first, names in _by_first(refs).items())


def subject_leftovers(engine: Engine, subject: str, walk: Walk) -> int:
    """What is left of the subject: members of their set, and objects the walk met that still
    hold a version labelled with them."""
    left = int(engine.scard(subject_key(engine, subject)))
    return left + sum(_owned_left(engine, subject, kind, refs) for kind, refs in walk.objects.items())
