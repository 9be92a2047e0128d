"""History summarisation, pure: which prefix of a history to fold into one summary entry.

Summaries are cumulative (DESIGN §6): folding an earlier summary adds its ``summarized_count``,
``op_counts`` and ``keys_touched`` into the new one instead of counting it as one ``summary`` op.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["SummaryPlan", "apply_plan", "fold", "plan_summary"]


@dataclass(frozen=True, slots=True)
class SummaryPlan:
    """Replace the first ``folded`` entries of the history by ``entry``."""

    folded: int
    entry: dict[str, Any]


def fold(entries: Sequence[Mapping[str, Any]], timestamp: float) -> dict[str, Any]:
    """One summary entry covering ``entries`` (earlier summaries included, cumulatively)."""
    count = 0
    op_counts: dict[str, int] = {}
    keys: set[str] = set()
    for entry in entries:
        if entry.get("op") == "summary":
            count += int(entry.get("summarized_count", 0))
            for op, n in dict(entry.get("op_counts") or {}).items():
                op_counts[str(op)] = op_counts.get(str(op), 0) + int(n)
            keys.update(str(k) for k in entry.get("keys_touched") or () if k)
            continue
        count += 1
        op = str(entry.get("op", "unknown"))
        op_counts[op] = op_counts.get(op, 0) + 1
        key = entry.get("key")
        if key:
            keys.add(str(key))
    return {
        "op": "summary",
        "summarized_count": count,
        "op_counts": op_counts,
        "keys_touched": sorted(keys),
        "timestamp": timestamp,
    }


def plan_summary(
    entries: Sequence[Mapping[str, Any]], max_entries: int, timestamp: float
) -> SummaryPlan | None:
    """What to fold when ``entries`` is longer than ``max_entries`` (None: nothing to do).

    The newest ``max_entries // 2`` entries stay as they are; everything older becomes one
    summary entry placed first.
    """
    if len(entries) <= max_entries:
        return None
    keep = max_entries // 2
    old = entries[:-keep] if keep > 0 else entries
    return SummaryPlan(folded=len(old), entry=fold(old, timestamp))


def apply_plan(entries: Sequence[Mapping[str, Any]], plan: SummaryPlan) -> list[dict[str, Any]]:
    """``entries`` after ``plan``: the summary, then the entries it did not fold."""
    return [plan.entry, *(dict(e) for e in entries[plan.folded :])]
