"""A question that asks for several things gets its hits spread over the conversation's sessions.

"What activities does Melanie partake in?" is answered by turns of many sessions (swimming in one,
pottery in another, camping in a third). Propagation lifts whole sessions together (neighbours,
session boost), so the first hits of such a question tend to come from the one session that scored
best, and the other answers fall below the cut. For a question of that shape, the ``n``-th hit of a
session (counted in ranking order, from 0) has its score multiplied by ``decay ** n``: the best hit
of every session keeps its score, repeats from one session give way to the best of the others.
A question asking for one thing ("When did she ...?", "What is her job?") is left as it is.

The shape is read by rules, without a language model (:func:`asks_for_several`): "what" or "which",
at most one word, then a plural noun that is not a verb ("What activities ...", "Which classical
musicians ..."), "how many times", or "both".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .thread_table import ThreadTable

__all__ = ["asks_for_several", "spread_sessions"]

_SEVERAL = re.compile(
    r"\s*(?:(?:what|which)\s+(?:[\w+-]+\s+)?"  # "what" or "which", at most one word ("classical"),
    r"(?!(?:does|has|was|is)\b)[\w+-]+[^s'\W]s\b"  # then a plural that is not a verb ("musicians")
    r"|how many times\b|.*\bboth\b)",
    re.IGNORECASE,
)


def asks_for_several(query: str) -> bool:
    """Whether ``query`` has the shape of a question asking for several things (module docstring)."""
    return _SEVERAL.match(query) is not None


def spread_sessions(
    table: ThreadTable, ranked: Sequence[tuple[str, float]], decay: float
) -> list[tuple[str, float]]:
    """``ranked`` (best first) re-scored: each positive score times ``decay ** n``, ``n`` the number of
    hits of the same session ranked before it (ids without a session keep their score), best first
    again (ties keep their order)."""
    slots = table.slots([entry_id for entry_id, _ in ranked])
    sessions = np.where(slots >= 0, table.session[np.maximum(slots, 0)], -1).tolist()
    seen: dict[int, int] = {}
    out: list[tuple[str, float]] = []
    for (entry_id, score), session in zip(ranked, sessions, strict=True):
        if session < 0 or score <= 0:
            out.append((entry_id, score))
            continue
        n = seen.get(session, 0)
        seen[session] = n + 1
        out.append((entry_id, score * decay**n))
    out.sort(key=lambda pair: -pair[1])
    return out
