"""What the session tier forgets: one session's state, as a forget's session step (see
:mod:`memstack.services.lifecycle.plans`).

Values leave with their key-set member in one batch each; the structure goes last, once the key
set is empty (a racing ``put`` sends it round again), so a crash at any point leaves either a
session a re-run finds again or unreachable orphans the prefix scan removes.
"""

from __future__ import annotations

from typing import Final

from ...engines import Engine
from ...engines.bulk import BATCH_KEYS, guarded_sweep
from ...foundation.errors import Conflict
from ...foundation.limits import short_repr
from .layout import SESSIONS_KEY, Layout
from .validate import SESSION_ID_RULE

__all__ = ["FORGETS", "LEFTOVERS", "MAX_ROUNDS", "forget_state", "state_leftovers"]

MAX_ROUNDS: Final = 20
"""Rounds a step makes while writers keep adding to what it forgets, before it gives up (Conflict)."""

Counts = dict[str, int]


def _layout(engine: Engine, session_id: str) -> Layout | None:
    """The session's layout, or None when ``session_id`` is not an id of this tier."""
    return Layout(engine.tag(session_id)) if SESSION_ID_RULE.fullmatch(session_id) else None


def forget_state(engine: Engine, session_id: str) -> Counts:
    """Every key of the session and its registry entry.

    Raises:
        Conflict: writers kept adding keys for :data:`MAX_ROUNDS` rounds (run it again).
    """
    layout = _layout(engine, session_id)
    if layout is None:
        return {}
    removed = int(engine.srem(SESSIONS_KEY, session_id))
    for _ in range(MAX_ROUNDS):
        members = sorted(engine.smembers(layout.keys))
        for start in range(0, len(members), BATCH_KEYS):
            chunk = members[start : start + BATCH_KEYS]
            with engine.batch() as batch:
                batch.delete(*[layout.data(k) for k in chunk])
                batch.srem(layout.keys, *chunk)
            assert batch.result is not None
            removed += int(batch.result.results[0])
        leftovers = [k for k in engine.scan(layout.prefix) if k != layout.keys]
        done, count = guarded_sweep(engine, layout.keys, sorted(leftovers), layout.structural())
        removed += count
        if done:
            return {"sessions": removed}
    raise Conflict(f"session {short_repr(session_id)}: writers kept adding keys; forget it again")


def state_leftovers(engine: Engine, session_id: str) -> int:
    """Keys of the session still stored, and its registry entry."""
    layout = _layout(engine, session_id)
    if layout is None:
        return 0
    return sum(1 for _ in engine.scan(layout.prefix)) + int(engine.sismember(SESSIONS_KEY, session_id))


FORGETS: Final = {"session": (forget_state,)}
"""The selectors this tier forgets, with its steps for each."""
LEFTOVERS: Final = {"session": state_leftovers}
"""What the verification asks this tier, per selector."""
