"""Retention as data: how long each tier keeps what nobody asked to forget.

| policy | tier | enforced by |
|---|---|---|
| ``long_term_max_age`` | long-term entries unchanged for longer are deleted | the sweep |
| ``conversation_idle`` | conversations without a new message for longer are forgotten | the sweep |
| ``archive_max_age`` | dream records and the entries they archived | an engine TTL on each record |
| ``turn_log_max_age`` | turn-log entries older are trimmed | the sweep |

Whatever the policies, every sweep also deletes the long-term entries past their own
``expires_at`` (searches hide them from that moment; ``expired`` in the sweep's counts).

A policy left unset keeps forever (``archive_max_age`` then keeps the dream default, 30 days).
Settings read ``long_term_max_age=90d,turn_log_max_age=7d`` (units ``s``, ``m``, ``h``, ``d``;
``MEMSTACK_RETENTION`` or ``memstack serve --retention``). :func:`sweep` applies the sweep-enforced
policies in bounded steps and prunes the registries that reads leave alone (reads never write).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Final

from ...foundation.errors import InvalidConfiguration
from ...foundation.limits import MAX_TTL_SECONDS, short_repr

if TYPE_CHECKING:
    from ..tiers import Tiers

__all__ = ["ENV", "POLICIES", "Retention", "parse_retention", "sweep"]

ENV: Final = "MEMSTACK_RETENTION"
POLICIES: Final = (
    ("long_term_max_age", "long_term", "entries unchanged for longer are deleted", "sweep"),
    ("conversation_idle", "conversations", "conversations idle for longer are forgotten", "sweep"),
    ("archive_max_age", "dream", "dream records and their archives are kept this long", "engine TTL"),
    ("turn_log_max_age", "turn_log", "turn-log entries older are trimmed", "sweep"),
)
"""``(policy, tier, what it does, enforced by)``, in the order ``doctor`` prints them."""

_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION: Final = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
SWEEP_LIMIT: Final = 1000
"""Most objects one sweep step removes per policy (the next sweep goes on)."""


@dataclass(frozen=True, slots=True)
class Retention:
    """Seconds each policy keeps (None: forever). See the module table."""

    long_term_max_age: float | None = None
    conversation_idle: float | None = None
    archive_max_age: float | None = None
    turn_log_max_age: float | None = None

    def describe(self) -> list[dict[str, Any]]:
        """One row per policy: name, tier, seconds (None: forever), what it does, how."""
        return [
            {"policy": name, "tier": tier, "seconds": getattr(self, name), "does": does, "enforced_by": how}
            for name, tier, does, how in POLICIES
        ]


def _seconds(name: str, text: str) -> float:
    match = _DURATION.match(text)
    if match is None:
        raise InvalidConfiguration(f"retention {name}={short_repr(text)}: must be a number with s, m, h or d")
    value = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if not 0 < value <= MAX_TTL_SECONDS:
        raise InvalidConfiguration(f"retention {name}={short_repr(text)}: must be > 0 and at most ten years")
    return value


def parse_retention(text: str | None = None, environ: Mapping[str, str] | None = None) -> Retention:
    """``name=duration`` pairs, comma-separated (``text``, else ``$MEMSTACK_RETENTION``); blank: keep all.

    Raises:
        InvalidConfiguration: an unknown policy (the message lists them) or a bad duration.
    """
    env = os.environ if environ is None else environ
    raw = text if text is not None else env.get(ENV, "")
    names = [f.name for f in fields(Retention)]
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in raw.split(","))):
        name, sep, duration = part.partition("=")
        name = name.strip()
        if not sep or name not in names:
            raise InvalidConfiguration(
                f"retention {short_repr(part)}: must be NAME=DURATION, NAME one of {', '.join(names)}"
            )
        values[name] = _seconds(name, duration)
    return Retention(**values)


def sweep(mem: Tiers, retention: Retention, *, limit: int = SWEEP_LIMIT) -> dict[str, int]:
    """Apply the sweep-enforced policies to ``mem`` (one tenant's tiers, e.g. a
    :class:`memstack.Memory`), delete the long-term entries past their ``expires_at`` and prune
    stale registry ids; returns what went per tier (``expired``: those entries). Bounded: at most
    ``limit`` objects per policy per call.

    Raises:
        EngineUnavailable: the engine went away (the next sweep goes on).
    """
    now = mem.engine.clock.now()
    done = {"long_term": 0, "expired": 0, "conversations": 0, "turn_log": 0, "registries": 0}
    done["expired"] = _expired_entries(mem, limit)
    if retention.long_term_max_age is not None:
        done["long_term"] = _old_entries(mem, now - retention.long_term_max_age, limit)
    if retention.conversation_idle is not None:
        done["conversations"] = _idle_conversations(mem, now - retention.conversation_idle, limit)
    if retention.turn_log_max_age is not None:
        done["turn_log"] = _old_turns(mem, now - retention.turn_log_max_age, limit)
    done["registries"] = mem.sessions.prune() + mem.turns.prune() + mem.working("memstack/retention").prune()
    return done


def _expired_entries(mem: Tiers, limit: int) -> int:
    from ...tiers.longterm.deletes import expiring_scopes

    removed = 0
    for scope in expiring_scopes(mem.engine):
        if removed >= limit:
            break
        removed += mem.long_term(scope, embedder=None).sweep_expired(limit - removed)
    return removed


def _old_entries(mem: Tiers, cutoff: float, limit: int) -> int:
    from ...tiers.longterm.backfill import stored_scopes

    removed = 0
    for _, scope in stored_scopes(mem.engine):
        memories = mem.long_term(scope, embedder=None)
        for entry in memories.entries():
            if removed >= limit:
                return removed
            if entry.last_changed.timestamp() < cutoff:
                removed += memories.delete(entry.id)
    return removed


def _idle_conversations(mem: Tiers, cutoff: float, limit: int) -> int:
    from .forget import forget

    removed = 0
    for conversation_id in mem.conversations.conversations():
        if removed >= limit:
            break
        last = mem.conversations.messages(conversation_id, -1, -1)
        if last and last[0].created_at < cutoff:
            forget(mem.engine, conversation=conversation_id)
            removed += 1
    return removed


def _old_turns(mem: Tiers, cutoff: float, limit: int) -> int:
    """Trim the log's head: entries are appended in time order, so the old ones come first."""
    from ...tiers.conversation.turns_forget import lease

    log = mem.turns.log_key
    head = mem.engine.lrange(log, 0, limit - 1)
    old = 0
    for line in head:
        try:
            stamp = float(json.loads(line).get("timestamp", 0))
        except (ValueError, AttributeError, TypeError):  # a foreign line is left alone, and stops the trim
            break
        if stamp >= cutoff:
            break
        old += 1
    if old:
        with lease(mem.turns):  # a forget rewriting the log must not interleave with the trim
            mem.engine.ltrim(log, old, -1)  # appends only ever go to the tail: the head is stable
    return old
