"""What each tier can forget, registered in one table: a forget walks it over the engine.

Each tier's ``forget`` module declares ``FORGETS`` (selector → its steps, each ``step(engine,
value) -> {tier: count}``) and ``LEFTOVERS`` (selector → what it still holds, for the
verification). :data:`PLANS` and :data:`CHECKS_LEFT` gather them, tier by tier, in the order a
forget runs them: a session's state goes before its windows, turns and working memory; a scope's
entries before its dream records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Final

from ...engines import Engine
from ...tiers.conversation import forget as conversation
from ...tiers.longterm import forget as long_term
from ...tiers.session import forget as session
from ...tiers.shared import forget as shared
from ...tiers.working import forget as working
from ..dream import forget as dream
from .selectors import SELECTORS

__all__ = ["CHECKS_LEFT", "PLANS", "TIER_MODULES", "Counts", "Step"]

Counts = dict[str, int]
Step = Callable[[Engine, str], Counts]
Leftovers = Callable[[Engine, str], int]

TIER_MODULES: Final[tuple[ModuleType, ...]] = (session, conversation, long_term, dream, working, shared)
"""The tiers' forget modules, in the order their steps run."""


def _gather() -> tuple[dict[str, tuple[Step, ...]], dict[str, tuple[Leftovers, ...]]]:
    plans: dict[str, tuple[Step, ...]] = {kind: () for kind in SELECTORS}
    left: dict[str, tuple[Leftovers, ...]] = {kind: () for kind in SELECTORS}
    for module in TIER_MODULES:
        for kind, steps in module.FORGETS.items():
            plans[kind] += tuple(steps)
        for kind, check in module.LEFTOVERS.items():
            left[kind] += (check,)
    return plans, left


_PLANS, _LEFT = _gather()
PLANS: Final[Mapping[str, tuple[Step, ...]]] = _PLANS
"""Selector → the steps of every tier that forget it (``subject`` is walked by :mod:`.subjects`)."""
CHECKS_LEFT: Final[Mapping[str, tuple[Leftovers, ...]]] = _LEFT
"""Selector → what every tier still holds for it."""
