"""``forget``: remove every trace of one subject, session, conversation, long-term scope,
working-memory namespace or shared board, then prove it with a verification.

The work follows the keyspace registry, over the engine (never over a ``Memory``):

1. every tier's steps for the selector (:data:`memstack.services.lifecycle.plans.PLANS`; a subject is walked
   object by object by :mod:`.subjects`, each checked against its own label);
2. the engine's own records carrying the selector's data (SQLite's change events, Redis' batch
   replies) are dropped (:mod:`.traces`);
3. the engine is compacted (SQLite: the WAL checkpointed and truncated; ``vacuum``: the file rebuilt);
4. the verification: what every tier still holds for the selector, and the engine's own records
   still carrying it; with ``audit``, also every record of the whole keyspace carrying it (a read of
   everything the engine stores: slow on a big engine, thorough).

Every step is bounded and idempotent, so a forget interrupted by a crash finishes when run again;
the report's ``remaining`` is then 0.
"""

from __future__ import annotations

from ...engines import Engine
from ...foundation.errors import InvalidValue
from ...foundation.limits import short_repr
from ...tiers.conversation.forget import turn_conversations
from ...tiers.conversation.turn_source import candidates
from . import traces
from .plans import CHECKS_LEFT, PLANS, Counts
from .report import ForgetReport
from .selectors import CHECKS, SELECTORS
from .subjects import forget_subject, subject_leftovers

__all__ = ["SELECTORS", "forget"]


def _selector(selector: dict[str, str | None]) -> tuple[str, str]:
    given = {k: v for k, v in selector.items() if v is not None}
    unknown = sorted(set(given) - set(SELECTORS))
    if unknown or len(given) != 1:
        raise InvalidValue(
            f"forget {short_repr(given)}: give exactly one of {', '.join(SELECTORS)}"
            + (f" (unknown: {', '.join(unknown)})" if unknown else "")
        )
    ((kind, raw),) = given.items()
    return kind, CHECKS[kind](raw)


def forget(
    engine: Engine, *, vacuum: bool = False, audit: bool = False, **selector: str | None
) -> ForgetReport:
    """Remove every trace of exactly one selector (see :data:`SELECTORS`) on ``engine``, then verify
    (see the module docstring).

    Raises:
        InvalidValue: no selector, more than one, or an unknown one (the message lists them).
        InvalidKey: a value that breaks its selector's rule (the tier's own error).
        Conflict: writers kept changing what is being forgotten, or another forget holds the turn
            log (run it again).
        EngineUnavailable: the engine went away (run it again: the forget resumes).
    """
    kind, value = _selector(selector)
    deleted: Counts = {}

    def add(more: Counts) -> None:
        for tier, count in more.items():
            deleted[tier] = deleted.get(tier, 0) + count

    # The conversations a session's turns were copied to: their batch records name them too.
    copies = turn_conversations(engine, value) if kind == "session" else []
    walk = None
    if kind == "subject":
        walk = forget_subject(engine, value)
        add(walk.counts)
    else:
        for step in PLANS[kind]:
            add(step(engine, value))
    extra = () if walk is None else walk.removed_keys
    containers = (
        () if walk is None else [(k, r[0]) for k in ("session", "conversation") for r in walk.objects[k]]
    )
    trail = [traces.Trace.of(engine, kind, value, extra)]
    trail += [traces.Trace.of(engine, k, v) for k, v in containers]
    copies += [c for k, v in containers if k == "session" for s in (value, None) for c in candidates(v, s)]
    trail += [traces.Trace.of(engine, "conversation", c) for c in sorted(set(copies))]
    add({"engine": traces.purge(engine, trail)})
    engine.compact(vacuum=vacuum)
    if walk is not None:
        remaining = subject_leftovers(engine, value, walk)
    else:
        remaining = sum(check(engine, value) for check in CHECKS_LEFT[kind])
    remaining += traces.carried(engine, trail)
    if audit:
        remaining += traces.audit(engine, trail)
    return ForgetReport({kind: value}, deleted, remaining)
