"""``ContextBuilder``: the messages an LLM gets on one turn (seed 001, "Memory injection flow").

Per turn it reads the recent turns, recalls long-term memories for the user's message (once per
session each: delta injection), lists working-memory inventories (keys, never values) and
assembles them, pure, with :mod:`.budget` and :mod:`.format`.

Message order (stable, so prompt caches stay warm: what changes least comes first):

1. the system prompt (if any);
2. the history: the recent turns before the current message, oldest first (user turns as
   ``user``, every other role as ``assistant``); it only grows at its end between turns;
3. the per-turn blocks, as system messages: long-term recall (current memories only: never a
   superseded or expired one), the own working-memory
   inventory, then (user sessions only) patrol findings and sub-agent ``-index`` outlines;
4. the current user message, last.

This differs from the seed only in placing the current message after the per-turn blocks (the
seed replays it inside the history and appends the blocks after it); the content is the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...engines.base import Engine
from ...foundation.errors import InvalidValue
from ...foundation.limits import MAX_COUNT, MAX_VALUE_BYTES, check_text, short_repr
from ...services.memory import Memory
from ...tiers.longterm import InjectionTracker, LongTermMemory, SearchHit
from ...tiers.longterm.entry import current_at
from ...tiers.longterm.validate import check_session_id
from ...tiers.working import WorkingEntry, WorkingMemory, is_user_namespace
from . import format as fmt
from .budget import ExplainItem, Fitted, Line, Section, fit

if TYPE_CHECKING:
    from ...tiers.conversation import TurnMemory

__all__ = ["BuiltContext", "ContextBuilder"]


@dataclass(frozen=True, slots=True)
class BuiltContext:
    """What :meth:`ContextBuilder.build` returns.

    Attributes:
        messages: OpenAI chat messages (``{"role", "content"}`` dicts), ready to send.
        explain: for every candidate item, whether it is included and why (in message order,
            then what the budget dropped, then what was left out before it).
        tokens: the messages' token count (None when no budget or counter was configured).
        over_budget: True when even the never-dropped parts exceed the budget.
        session_id: the session built for.
        namespace: the working-memory namespace used.
    """

    messages: list[dict[str, Any]]
    explain: list[ExplainItem] = field(default_factory=list)
    tokens: int | None = None
    over_budget: bool = False
    session_id: str = ""
    namespace: str = ""

    def explain_text(self) -> str:
        """The explanation, one line per item (``+`` included, ``-`` left out)."""
        return "\n".join(str(item) for item in self.explain)


def _positive_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_COUNT:
        raise InvalidValue(
            f"{name} {short_repr(value)}: must be an int of at least {minimum} (at most 2**53)"
        )
    return value


class ContextBuilder:
    """Builds each turn's context for one long-term scope.

    Args:
        mem_or_engine: a :class:`~memstack.Memory` or an engine.
        scope: the long-term scope recalled from.
        history_turns: turns replayed, the current message included (a turn is one message).
        recall_limit: most memories recalled per turn for the message (0 disables recall).
        first_turn_fallback: on the first turn, when the search finds nothing, the number of most
            recent memories recalled instead (0 disables the fallback).
        token_budget: optional ceiling on the messages' tokens; see :mod:`memstack.agent.context.budget`
            for what is dropped first.
        token_counter: an encoding/model name or a ``callable(str) -> int`` (see
            :func:`memstack.llm.tokens.token_counter`); default ``o200k_base`` when budgeted.
        system_prompt: the first message, never dropped.
        long_term: a configured :class:`LongTermMemory` to recall from (e.g. with an embedder);
            by default one on ``scope``.

    Raises:
        InvalidValue: a limit that is not an int in range, a system prompt that is not valid text.
        InvalidKey: a bad scope.
    """

    def __init__(
        self,
        mem_or_engine: Memory | Engine,
        *,
        scope: str = "default",
        history_turns: int = 20,
        recall_limit: int = 8,
        first_turn_fallback: int = 5,
        token_budget: int | None = None,
        token_counter: str | Callable[[str], int] | None = None,
        system_prompt: str | None = None,
        long_term: LongTermMemory | None = None,
    ) -> None:
        self.engine = mem_or_engine.engine if isinstance(mem_or_engine, Memory) else mem_or_engine
        self.history_turns = _positive_int("history_turns", history_turns, 1)
        self.recall_limit = _positive_int("recall_limit", recall_limit, 0)
        self.first_turn_fallback = _positive_int("first_turn_fallback", first_turn_fallback, 0)
        self.token_budget = None if token_budget is None else _positive_int("token_budget", token_budget, 1)
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise InvalidValue(f"system_prompt {short_repr(system_prompt)}: must be a string or None")
        if system_prompt is not None:
            check_text(system_prompt, "system_prompt", max_bytes=MAX_VALUE_BYTES)
        self.system_prompt = system_prompt
        self.counter: Callable[[str], int] | None = None
        if token_budget is not None or token_counter is not None:
            from ...llm.tokens import token_counter as make_counter

            self.counter = make_counter(token_counter)
        if long_term is None:  # a Memory's scopes carry its retrieval setting (embedder)
            long_term = (
                mem_or_engine.long_term(scope)
                if isinstance(mem_or_engine, Memory)
                else LongTermMemory(self.engine, scope)
            )
        self.long_term = long_term
        self.tracker = InjectionTracker(self.engine)
        # A Memory's own turn tier carries its options (retention, idle timeout); share it.
        self._turns: TurnMemory | None = mem_or_engine.turns if isinstance(mem_or_engine, Memory) else None

    @property
    def turns(self) -> TurnMemory:
        """The conversation turns the history comes from."""
        if self._turns is None:
            from ...tiers.conversation import TurnMemory

            self._turns = TurnMemory(self.engine)
        return self._turns

    def build(
        self, session_id: str, user_message: str, *, namespace: str | None = None, dry_run: bool = False
    ) -> BuiltContext:
        """The messages for this turn of ``session_id`` answering ``user_message``.

        The current message may already be recorded as the session's last turn (as the seed
        does) or not; either way it appears once, last. Recalled memories are marked injected
        for the session, so a later turn does not repeat them; ``dry_run`` previews the turn
        without marking anything.

        Raises:
            InvalidSessionId: a malformed session id.
            InvalidKey: a malformed namespace (default ``session/{session_id}``).
            InvalidValue: a user message that is not a string, holds a lone surrogate or is over
                1 MiB.
            EngineUnavailable: the engine cannot be reached.
        """
        sid = check_session_id(session_id)
        if not isinstance(user_message, str):
            raise InvalidValue(f"user_message {short_repr(user_message)}: must be a string")
        check_text(user_message, "user_message", max_bytes=MAX_VALUE_BYTES)
        working = WorkingMemory(self.engine, namespace if namespace is not None else f"session/{sid}")
        history, first_turn = self._history(sid, user_message)
        hits, fallback = self._recall(user_message, first_turn=first_turn)
        budgeted = self.token_budget is not None
        fresh, excluded = self._delta(sid, hits, mark=not budgeted and not dry_run)
        now_ms = self.engine.now_ms()
        sections = [
            *self._system_sections(),
            *_history_sections(history),
            *_recall_sections(fresh, fallback),
            *_inventory_sections(working, now_ms),
            Section("user", "user", [Line("message", user_message, "the current message (never dropped)")]),
        ]
        fitted = fit(sections, self.token_budget, self.counter, excluded)
        if budgeted and not dry_run:
            fitted = self._mark_included(sid, sections, fitted, excluded)
        return BuiltContext(
            fitted.messages, fitted.explain, fitted.tokens, fitted.over_budget, sid, working.namespace
        )

    # -- gathering -----------------------------------------------------------------------------
    def _system_sections(self) -> list[Section]:
        if self.system_prompt is None:
            return []
        return [
            Section("system", "system", [Line("prompt", self.system_prompt, "system prompt (never dropped)")])
        ]

    def _history(self, sid: str, user_message: str) -> tuple[list[tuple[str, str]], bool]:
        """The turns before the current message (at most ``history_turns - 1``), and whether this
        is the session's first turn (the seed's ``history.Count == 1``)."""
        turns = [(t.role, t.content) for t in self.turns.recent(sid, max(self.history_turns, 2))]
        if turns and turns[-1] == ("user", user_message):
            turns.pop()  # the current message, already recorded: it goes last, once
        keep = self.history_turns - 1
        return (turns[-keep:] if keep else []), not turns

    def _recall(self, message: str, *, first_turn: bool) -> tuple[list[SearchHit], bool]:
        if self.recall_limit == 0:
            return [], False
        now = self.engine.clock.now()
        hits = _current(self.long_term.search(message, max_results=self.recall_limit), now)
        if not hits and first_turn and self.first_turn_fallback > 0:
            return _current(self.long_term.search(None, max_results=self.first_turn_fallback), now), True
        return hits, False

    def _delta(
        self, sid: str, hits: Sequence[SearchHit], *, mark: bool
    ) -> tuple[list[SearchHit], list[ExplainItem]]:
        fresh: list[SearchHit] = []
        excluded: list[ExplainItem] = []
        ids = [hit.entry.id for hit in hits]
        if mark:
            seen = [not first for first in self.tracker.try_mark_many(sid, ids)]
        else:
            seen = [self.tracker.was_injected(sid, entry_id) for entry_id in ids]
        for hit, entry_id, already in zip(hits, ids, seen, strict=True):
            if already:
                excluded.append(
                    ExplainItem("recall", entry_id, False, "already injected earlier in this session")
                )
            else:
                fresh.append(hit)
        return fresh, excluded

    def _mark_included(
        self, sid: str, sections: list[Section], fitted: Fitted, excluded: list[ExplainItem]
    ) -> Fitted:
        # With a budget, only what survived it is marked, so a dropped memory can come back later.
        included = [i.ident for i in fitted.explain if i.kind == "recall" and i.included]
        marked = self.tracker.try_mark_many(sid, included)
        raced = {i for i, first in zip(included, marked, strict=True) if not first}
        if not raced:
            return fitted
        late = [
            ExplainItem("recall", i, False, "injected meanwhile by another worker") for i in sorted(raced)
        ]
        kept = [
            Section(
                s.kind,
                s.role,
                [ln for ln in s.lines if s.kind != "recall" or ln.ident not in raced],
                s.header,
            )
            for s in sections
        ]
        return fit(kept, self.token_budget, self.counter, [*excluded, *late])


def _current(hits: list[SearchHit], now: float) -> list[SearchHit]:
    """The hits still current: searches show only those, and a context must never inject a
    superseded or expired memory, whatever long-term store it was given."""
    return [hit for hit in hits if current_at(hit.entry, now)]


def _history_sections(history: Sequence[tuple[str, str]]) -> list[Section]:
    total = len(history)
    return [
        Section(
            "history",
            "user" if role == "user" else "assistant",
            [Line(f"turn-{n}", content, f"recent turn {n} of {total}")],
        )
        for n, (role, content) in enumerate(history, start=1)
    ]


def _recall_sections(hits: Sequence[SearchHit], fallback: bool) -> list[Section]:
    if not hits:
        return []
    lines = []
    for rank, hit in enumerate(hits, start=1):
        entry = hit.entry
        if fallback:
            reason = f"first turn, nothing matched: recent memory {rank}"
        else:
            found_by = "+".join(hit.sources) or "search"
            reason = f"matched the message, rank {rank} ({found_by} score {hit.score:.3f})"
        lines.append(Line(entry.id, fmt.recall_line(entry.id, entry.category, entry.content), reason))
    return [Section("recall", "system", lines, fmt.RECALL_HEADER)]


def _inventory(
    kind: str, header: str, entries: Sequence[WorkingEntry], now_ms: int, reason: str
) -> list[Section]:
    if not entries:
        return []
    lines = [
        Line(e.key, fmt.inventory_line(e.key, e.remaining(now_ms / 1000), e.category, e.tags), reason)
        for e in entries
    ]
    return [Section(kind, "system", lines, header)]


def _inventory_sections(working: WorkingMemory, now_ms: int) -> list[Section]:
    if not is_user_namespace(working.namespace):
        (own,) = working.list_many([None], with_values=False)
        return _inventory("working", fmt.WORKING_HEADER, own, now_ms, f"own namespace {working.namespace}")
    own, patrol, subagent = working.list_many([None, "patrol", "subagent"], with_values=False)
    outlines = [e for e in subagent if e.key.endswith("-index")]
    return [
        *_inventory("working", fmt.WORKING_HEADER, own, now_ms, f"own namespace {working.namespace}"),
        *_inventory("patrol", fmt.PATROL_HEADER, patrol, now_ms, "patrol finding (user session)"),
        *_inventory(
            "subagent",
            fmt.SUBAGENT_HEADER,
            outlines,
            now_ms,
            "sub-agent outline, an '-index' key (user session)",
        ),
    ]
