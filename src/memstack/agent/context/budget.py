"""Fitting a turn's context into a token budget, and saying why each item is in or out. Pure.

The context is a list of :class:`Section` (one chat message each): the system prompt, history
turns, the recall and inventory blocks, the user message. A block is a header plus lines; its
lines are the units the budget drops. :data:`DROP_ORDER` is the policy, as data: each step names a
kind and how many of its units survive that step; the steps run in order until the context fits:

1. history, oldest turn first, down to none (a history left starting with an assistant message
   loses that message too, so it never opens mid-exchange);
2. long-term recall beyond the top 3 (lowest-ranked line first);
3. sub-agent outlines, then patrol findings (last line first);
4. the own working-memory inventory (last line first);
5. the remaining recall (lowest-ranked first).

The system prompt and the current user message are never dropped: if they alone exceed the
budget the context is returned over budget, and :attr:`Fitted.over_budget` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ...llm.tokens import count_message
from .format import join_block

__all__ = ["DROP_ORDER", "ExplainItem", "Fitted", "Line", "Section", "fit", "render"]

DROP_ORDER: Final[tuple[tuple[str, int], ...]] = (
    ("history", 0),
    ("recall", 3),
    ("subagent", 0),
    ("patrol", 0),
    ("working", 0),
    ("recall", 0),
)
"""(kind, units kept) steps, applied in order while the context is over budget."""

_REASONS: Final = {
    "history": "token budget: oldest history turns are dropped first",
    "recall": "token budget: lowest-ranked recalled memories are dropped",
    "subagent": "token budget: sub-agent outlines are dropped before the own inventory",
    "patrol": "token budget: patrol findings are dropped before the own inventory",
    "working": "token budget: the own inventory is dropped after history, recall and other inventories",
}


@dataclass(frozen=True, slots=True)
class Line:
    """One droppable unit: its identity (memory id, key, turn number), its text, why it is here."""

    ident: str
    text: str
    reason: str


@dataclass(slots=True)
class Section:
    """One chat message to be: ``kind`` (system, history, recall, working, patrol, subagent, user),
    its ``role``, an optional block ``header`` and its ``lines`` (a message without header has one)."""

    kind: str
    role: str
    lines: list[Line]
    header: str | None = None


@dataclass(frozen=True, slots=True)
class ExplainItem:
    """Why one item is in the context (``included``) or not, in plain words."""

    kind: str
    ident: str
    included: bool
    reason: str

    def __str__(self) -> str:
        mark = "+" if self.included else "-"
        return f"{mark} {self.kind} {self.ident}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Fitted:
    """The messages that fit, the explanation of every item, their token count (when counted)."""

    messages: list[dict[str, Any]]
    explain: list[ExplainItem] = field(default_factory=list)
    tokens: int | None = None
    over_budget: bool = False


def render(section: Section) -> dict[str, Any] | None:
    """The chat message of a section (None when it has no lines left)."""
    if not section.lines:
        return None
    texts = [line.text for line in section.lines]
    content = join_block(section.header, texts) if section.header is not None else "\n".join(texts)
    return {"role": section.role, "content": content}


def _cost(section: Section, counter: Callable[[str], int]) -> int:
    message = render(section)
    return 0 if message is None else count_message(message, counter)


def _units(sections: Sequence[Section], kind: str) -> list[tuple[int, int]]:
    return [(i, j) for i, s in enumerate(sections) if s.kind == kind for j in range(len(s.lines))]


def _victim(sections: Sequence[Section], kind: str, keep: int) -> tuple[int, int] | None:
    units = _units(sections, kind)
    if len(units) <= keep:
        return None
    # History goes oldest first; a block's lines go from its end (lowest rank / last listed).
    return units[0] if kind == "history" else units[-1]


def fit(
    sections: Sequence[Section],
    budget: int | None = None,
    counter: Callable[[str], int] | None = None,
    excluded: Sequence[ExplainItem] = (),
) -> Fitted:
    """Drop units per :data:`DROP_ORDER` until the messages cost at most ``budget`` tokens.

    ``counter`` counts the tokens of a text (needed with a budget); ``excluded`` are items the
    caller already left out (e.g. memories injected on an earlier turn), kept in the explanation.
    Sections are copied, never changed.
    """
    work = [Section(s.kind, s.role, list(s.lines), s.header) for s in sections]
    dropped: list[ExplainItem] = []
    tokens: int | None = None
    over = False
    if counter is not None:
        costs = [_cost(s, counter) for s in work]
        tokens = sum(costs)
        if budget is not None:
            for kind, keep in DROP_ORDER:
                while tokens > budget:
                    victim = _victim(work, kind, keep)
                    if victim is None:
                        break
                    for index, line_no in _with_orphaned_reply(work, kind, keep, victim):
                        line = work[index].lines.pop(line_no)
                        dropped.append(ExplainItem(kind, line.ident, False, _REASONS[kind]))
                        tokens -= costs[index]
                        costs[index] = _cost(work[index], counter)
                        tokens += costs[index]
            over = tokens > budget
    messages = [m for m in (render(s) for s in work) if m is not None]
    explain = [ExplainItem(s.kind, line.ident, True, line.reason) for s in work for line in s.lines]
    return Fitted(messages, [*explain, *dropped, *excluded], tokens, over)


def _with_orphaned_reply(
    sections: list[Section], kind: str, keep: int, victim: tuple[int, int]
) -> list[tuple[int, int]]:
    """The victim, plus (for history) the assistant reply it would leave at the head of history."""
    if kind != "history":
        return [victim]
    units = _units(sections, "history")
    if len(units) - 1 > keep and len(units) > 1:
        following = units[1]
        if sections[following[0]].role == "assistant":
            # Popping the victim first leaves ``following`` at the same (section, line) address
            # because every history section holds exactly one line.
            return [victim, following]
    return [victim]
