"""Data stored without a tenant: counted per tier, and moved into a tenant.

``memstack.open(url)``, the CLI and the keyless server all work on tenant ``default`` (keys
``t:default:…``). Keys outside every tenant prefix are engine-wide records (API keys under
``auth:``) or *untenanted data*: memories saved by ``memstack.open`` before tenants were its
default, data written with ``memstack.open(url, tenant=None)``, and the sessions of the RocketRide
pipeline node, which keeps the original's layout (``rr:memory:{session_id}:…``) on purpose. Only
a raw memory (``tenant=None``) reads them, so :func:`untenanted` counts them (``memstack doctor``)
and :func:`adopt` moves them into a tenant (``memstack tenants adopt --into default``).

Which tier a key belongs to and which keys move together come from the keyspace registry
(:mod:`memstack.foundation.keyspace`): a key's tier is the owner of its family, and a move goes group by
group, a group being the keys under one stem of the registry with one scope (one session,
conversation, long-term scope, namespace, board…; on a Redis Cluster they share a hash tag). Each
group moves in one atomic batch that writes the tenant's keys (values and expiry times exactly)
and deletes the old ones, so a reader sees the whole group in one place or the other. The batch is
guarded: a string that changed since it was read, or a tenant key that appeared meanwhile, aborts
it and the group is read again. Running it again after an interruption moves what is left.

* A tenant key holding a different value is a conflict: the group stays where it is and is
  reported, unless ``overwrite`` (then the tenant's key is replaced, and counted).
* Sets are merged (a union loses nothing), e.g. the sessions index ``rr:memory:__sessions__``.
* A tenant key that already holds exactly the moved value counts as moved (an interrupted run).
* A group of more than :data:`MAX_BATCH` keys moves in atomic chunks of that size.
* On a Redis Cluster a key without a hash tag (the sessions index) lands in another slot under the
  tenant prefix: it is written, then deleted, in two batches (it is a set, merged: harmless to redo).

Run it while nothing writes the untenanted layout (hashes, lists and sets have no value guard).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ...engines import Engine
from ...engines.prefixed import check_tenant
from ...foundation.errors import Conflict, InvalidValue
from ...foundation.keyspace import FAMILIES, Tag, family_of, no_tag, tenant_prefix
from .dump import read_key, write_value

__all__ = ["ADOPT_TIERS", "MAX_BATCH", "AdoptReport", "adopt", "group_of", "tier_of", "untenanted"]

ENGINE_WIDE: Final = ("api_keys", "engine")
"""Owners of the keyspace families that are not untenanted data: the service's API keys and the
records an engine keeps for itself (they belong to the whole engine, never to one tenant)."""
ADOPT_TIERS: Final = (
    *dict.fromkeys(f.owner for f in FAMILIES if f.owner not in ENGINE_WIDE),
    "other",
)
"""The tier names :func:`untenanted` counts and :func:`adopt` takes: the owners of the keyspace's
families, and ``other`` for keys no family declares."""
MAX_BATCH: Final = 1000
"""Keys moved per atomic batch; a bigger group moves in chunks."""
ATTEMPTS: Final = 5


def tier_of(key: str) -> str:
    """The tier an untenanted key belongs to (one of :data:`ADOPT_TIERS`, or an owner of
    :data:`ENGINE_WIDE`): the owner of its keyspace family."""
    found = family_of(key)[1]
    return "other" if found is None else found[0].owner


def group_of(key: str, tag: Tag = no_tag) -> str:
    """The keys that move together: the stem of the key's keyspace family filled in with its scope
    (``lt:alice:`` for ``lt:alice:e:1``; ``tag`` is the engine's, so on a Redis Cluster every key
    of a group shares one hash slot); a key of a global family, or one no family declares, alone."""
    found = family_of(key)[1]
    if found is None or not found[0].stem.text:
        return key
    family, parts = found
    return family.stem.render(tag, **parts)


def _untenanted_keys(engine: Engine) -> list[str]:
    """Keys outside every tenant prefix, but for the engine-wide ones."""
    return sorted(k for k in engine.scan("") if family_of(k)[0] is None and tier_of(k) not in ENGINE_WIDE)


def untenanted(engine: Engine) -> dict[str, int]:
    """Keys of untenanted data on the whole ``engine``, per tier (tiers with none left out).
    Reads keys only."""
    counts: dict[str, int] = defaultdict(int)
    for key in _untenanted_keys(engine):
        counts[tier_of(key)] += 1
    return {tier: counts[tier] for tier in ADOPT_TIERS if counts[tier]}


@dataclass
class AdoptReport:
    """What :func:`adopt` moved (or would move: ``dry_run``)."""

    tenant: str
    dry_run: bool
    moved: dict[str, int] = field(default_factory=dict)
    """Keys per tier."""
    families: int = 0
    """Groups moved (the keys of one scope of one tier, see :func:`group_of`)."""
    conflicts: list[str] = field(default_factory=list)
    """Groups left in place: the tenant holds other values under their keys."""
    overwritten: int = 0
    """Tenant keys replaced (``overwrite``)."""
    remaining: int = 0
    """Untenanted keys of the chosen tiers still there afterwards."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "dry_run": self.dry_run,
            "moved": dict(self.moved),
            "families": self.families,
            "conflicts": list(self.conflicts),
            "overwritten": self.overwritten,
            "remaining": self.remaining,
        }


def adopt(
    engine: Engine,
    tenant: str,
    *,
    tiers: Iterable[str] | None = None,
    dry_run: bool = False,
    overwrite: bool = False,
) -> AdoptReport:
    """Move the untenanted data of ``tiers`` (default: all) on the whole ``engine`` into ``tenant``.

    Raises:
        InvalidInput: a bad tenant name.
        InvalidValue: an unknown tier name.
        Conflict: a group kept changing while it was moved (run again when writers stopped).
        EngineUnavailable: the engine went away (run again: the move resumes).
    """
    prefix = tenant_prefix(check_tenant(tenant))
    chosen = set(ADOPT_TIERS if tiers is None else tiers)
    unknown = sorted(chosen - set(ADOPT_TIERS))
    if unknown:
        raise InvalidValue(f"tiers {unknown}: must be among {', '.join(ADOPT_TIERS)}")
    groups: dict[str, list[str]] = defaultdict(list)
    for key in _untenanted_keys(engine):
        if tier_of(key) in chosen:
            groups[group_of(key, engine.tag)].append(key)
    report = AdoptReport(tenant, dry_run)
    moved: dict[str, int] = defaultdict(int)
    for group, keys in groups.items():
        done, whole = _move_group(engine, prefix, keys, dry_run=dry_run, overwrite=overwrite, report=report)
        if not whole:
            report.conflicts.append(group)
        elif done:
            report.families += 1
        for key in done:
            moved[tier_of(key)] += 1
    report.moved = {tier: moved[tier] for tier in ADOPT_TIERS if moved[tier]}
    if not dry_run:
        report.remaining = sum(1 for k in _untenanted_keys(engine) if tier_of(k) in chosen)
    return report


def _move_group(
    engine: Engine, prefix: str, keys: Sequence[str], *, dry_run: bool, overwrite: bool, report: AdoptReport
) -> tuple[list[str], bool]:
    """The keys of one group moved, and False when a conflict left (the rest of) it in place."""
    moved: list[str] = []
    for start in range(0, len(keys), MAX_BATCH):
        chunk = keys[start : start + MAX_BATCH]
        for _ in range(ATTEMPTS):
            outcome = _move_chunk(engine, prefix, chunk, dry_run=dry_run, overwrite=overwrite, report=report)
            if outcome is not False:
                break
        else:
            raise Conflict(
                f"keys under {chunk[0]!r} kept changing while they were moved; run again once "
                "nothing writes the untenanted layout"
            )
        if outcome is None:
            return moved, False  # earlier chunks of a big group stay moved
        moved += outcome
    return moved, True


def _move_chunk(
    engine: Engine, prefix: str, keys: Sequence[str], *, dry_run: bool, overwrite: bool, report: AdoptReport
) -> list[str] | Literal[False] | None:
    """Move ``keys`` in one guarded batch: the keys moved, None on a conflict, False when the
    guard failed (read again)."""
    plan: list[tuple[str, str, Any, str]] = []  # key, kind, value, what to do with the target
    replaced = 0
    for key in keys:
        found = read_key(engine, key)
        if found is None:
            continue  # gone since the scan
        kind, value = found
        there = read_key(engine, prefix + key)
        if there is None:
            plan.append((key, kind, value, "write"))
        elif there == found:
            plan.append((key, kind, value, "same"))
        elif kind == "set" and there[0] == "set":
            plan.append((key, kind, value, "merge"))
        elif overwrite:
            plan.append((key, kind, value, "replace"))
            replaced += 1
        else:
            return None
    if dry_run or not plan:
        report.overwritten += replaced if dry_run else 0
        return [key for key, *_ in plan]
    if engine.clustered and len(plan) == 1 and "{" not in plan[0][0]:
        outcome = _move_untagged(engine, prefix, plan[0])
        report.overwritten += replaced if outcome else 0
        return outcome
    batch = engine.batch()
    for key, kind, value, action in plan:  # guards come before every write
        if kind == "string":
            batch.require_equal(key, value)
        else:
            batch.require_exists(key)
        target = prefix + key
        if action == "write":
            batch.require_missing(target)
        elif action == "same" and kind == "string":
            batch.require_equal(target, value)
    for key, kind, value, action in plan:
        target = prefix + key
        if action in ("write", "replace"):
            batch.delete(target)
            write_value(batch, target, kind, value)
            batch.copy_ttl(key, target)
        elif action == "merge":
            batch.sadd(target, *value)  # the tenant's set keeps its own expiry
    batch.delete(*[key for key, *_ in plan])
    if not batch.execute().applied:
        return False
    report.overwritten += replaced
    return [key for key, *_ in plan]


def _move_untagged(
    engine: Engine, prefix: str, step: tuple[str, str, Any, str]
) -> list[str] | Literal[False]:
    """A key without a hash tag on a cluster: its tenant copy lives in another slot, so it is
    written and then deleted, in two batches."""
    key, kind, value, action = step
    target = prefix + key
    if action != "same":
        ttl = engine.pttl(key)
        write = engine.batch()
        if action == "write":
            write.require_missing(target)
        if action in ("write", "replace"):
            write.delete(target)
            write_value(write, target, kind, value)
            if ttl > 0:
                write.pexpire(target, ttl)
        else:
            write.sadd(target, *value)
        if not write.execute().applied:
            return False
    drop = engine.batch()
    if kind == "string":
        drop.require_equal(key, value)
    drop.delete(key)
    if not drop.execute().applied:
        return False
    return [key]
