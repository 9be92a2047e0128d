"""``ForgetReport``: what a forget (or a tenant purge) removed, tier by tier, and what remains."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["TIERS", "ForgetReport"]

TIERS: Final = (
    "sessions",
    "conversations",
    "long_term",
    "working",
    "shared",
    "turn_log",
    "dream",
    "semantic_cache",
    "subject_index",
    "langgraph",
    "api_keys",
    "engine",
    "other",
)
"""The tiers a report counts, in the order every surface prints them (the owners of the keyspace's
families; ``engine``: records an engine keeps for itself, change events and batch replies)."""


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """The result of a forget or a purge.

    ``selector`` names what was forgotten (``{"subject": "alice"}``, ``{"tenant": "t1"}``);
    ``deleted`` counts removed objects per tier (every name of :data:`TIERS`, 0 when untouched);
    ``remaining`` is the verification: what every tier of the keyspace registry still holds for
    the selector, plus the engine's own records still carrying its data (with ``audit``, plus every
    trace a read of the whole keyspace finds); it must be 0. ``complete`` is False only when a
    bounded run stopped early (run it again to finish).
    """

    selector: dict[str, str]
    deleted: dict[str, int] = field(default_factory=dict)
    remaining: int = 0
    complete: bool = True

    @property
    def total(self) -> int:
        """Objects removed over every tier."""
        return sum(self.deleted.values())

    def to_dict(self) -> dict[str, Any]:
        """The one JSON shape of a report, used by the CLI, HTTP, MCP and the inspector."""
        return {
            "selector": dict(self.selector),
            "deleted": {tier: int(self.deleted.get(tier, 0)) for tier in TIERS},
            "total": self.total,
            "remaining": self.remaining,
            "complete": self.complete,
        }
