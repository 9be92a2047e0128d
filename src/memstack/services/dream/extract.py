"""The ``extract`` pass: what the new conversation turns teach, decided against what is known.

1. The turns of the pass's user (:mod:`.sources`: their conversations and turn-log entries,
   never another user's) this scope has not read yet (:mod:`.cursor`), at most
   :data:`EXTRACT_INPUT` of them, go to the chat model, which answers with candidate facts, each
   citing the message ids it comes from (``extract.md``).
2. Each candidate is searched in the scope (current entries; no model): the :data:`SIMILAR` best
   matches. A candidate saying exactly what a match says is a duplicate, without asking. When any
   candidate has matches, the model decides for each one (``extract-decide.md``): ``add``,
   ``update`` (it supersedes the matches it names: they get ``valid_to`` and ``superseded_by``),
   ``duplicate`` or ``unrelated`` (nothing saved).
3. :func:`extraction_plan` (pure) makes the plan: new entries with their message ids as
   provenance (in the record and in ``metadata``: ``{"source": "extracted", "message_ids": …,
   "session_ids": …}``), valid from the time the turns say or the time they were said, labelled
   with the user of their turns (a fact citing turns of two users, or of a user and an unlabelled
   conversation, is dropped: it would belong to nobody forget can find). The plan passes the
   guard rails of every pass (no more than half of the scope superseded; a plan naming only ids
   that do not exist is refused), and is applied with its record and the moved cursor in one
   batch. An answer that cannot be used skips
   the pass (recorded), and the cursor stays: the same turns are read again next time.

Only what the model may name is named: message ids of the turns shown, entry ids of the matches
shown under the fact; anything else is reported (``unknown``) and never touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from ...engines.base import Batch
from ...foundation.errors import InvalidConfiguration, InvalidValue
from ...foundation.timefmt import strict_instant
from ...llm.chat import ChatModel
from ...search.evidence import relevance_gate
from ...tiers.longterm import LongTermMemory, MemoryEntry
from ...tiers.longterm.similar import normalise_text
from ...tiers.longterm.validate import check_metadata, new_id
from . import cursor
from .keys import DreamKeys
from .parse import MODEL_FAILURES, Decision, ProposedFact, parse_decisions, parse_facts
from .plan import NewEntry, Plan, proposed_category, proposed_entry
from .prompt import decision_prompt, extraction_prompt, prompt_digest
from .sources import pass_turns

if TYPE_CHECKING:
    from ...tiers.conversation import ConversationStore, TurnMemory


class _Pass(Protocol):
    """What the pass needs of a :class:`~memstack.services.dream.Dreamer` (named here: a dreamer runs it)."""

    memory: LongTermMemory
    model: ChatModel | None
    turns: TurnMemory | None
    conversations: ConversationStore | None
    user: str
    extract_directive: str
    decision_directive: str

    def ask(self, messages: list[dict[str, Any]]) -> str: ...


class Extraction(NamedTuple):
    """What one extract pass decided, for the dreamer to finish: the plan (or why the pass is
    skipped), the digest of the prompts asked, and the cursor move to write in the same batch."""

    plan: Plan | str
    digest: str
    also: Callable[[Batch], None]


__all__ = ["EXTRACT_INPUT", "SIMILAR", "Extraction", "extraction_plan", "run_extract"]

EXTRACT_INPUT: Final = 200
"""Most new turns one pass reads (the next pass goes on from there)."""
SIMILAR: Final = 5
"""Stored memories shown to the model next to each candidate fact."""
SOURCE: Final = "extracted"
"""The ``metadata["source"]`` of what the pass saves."""


def _time(text: str | float | None) -> datetime | None:
    # The one strict rule (epoch seconds or ISO with a zone); a time the model garbled or gave
    # without a zone is None: the turns' time is used instead.
    return strict_instant(text)


def _dropped(
    fact: ProposedFact, messages: Sequence[str], decision: Decision, shown: Iterable[MemoryEntry]
) -> bool:
    """Whether ``fact`` saves nothing: empty, citing no turn shown, decided a duplicate or
    unrelated, or saying exactly what a match says."""
    text = normalise_text(fact.content)
    return (
        not fact.content.strip()
        or not messages
        or decision.action in ("duplicate", "unrelated")
        or any(normalise_text(e.content) == text for e in shown)
    )


def _entry(
    fact: ProposedFact,
    messages: Sequence[str],
    turns: Mapping[str, Mapping[str, Any]],
    subject: str | None,
    now: datetime,
    make_id: Callable[[], str],
) -> MemoryEntry:
    """The entry a kept fact becomes: its turns as provenance, labelled with their user, valid
    from the time the fact names (when not in the future) or the time its turns were said."""
    said = max(float(turns[m].get("timestamp", 0)) for m in messages)
    told = _time(fact.valid_from)
    sessions = dict.fromkeys(str(turns[m].get("session_id", "")) for m in messages)
    metadata: dict[str, Any] = {
        "source": SOURCE,
        "message_ids": list(messages),
        "session_ids": list(sessions),
    }
    return proposed_entry(
        fact,
        now,
        make_id,
        metadata=check_metadata(metadata),
        subject=subject,
        given_valid_from=told if told is not None and told <= now else datetime.fromtimestamp(said, UTC),
    )


def extraction_plan(
    facts: Sequence[ProposedFact],
    similar: Sequence[Sequence[MemoryEntry]],
    decisions: Sequence[Decision],
    turns: Mapping[str, Mapping[str, Any]],
    now: datetime,
    *,
    make_id: Callable[[], str] = new_id,
) -> Plan:
    """The plan of an extraction: ``facts`` with the ``similar`` entries shown for each (same
    order), the ``decisions`` made on them (a fact without one is added; the first decision of a
    fact counts) and the turns shown, by message id.

    A fact without content or without one message id of ``turns`` is dropped, as are duplicates
    (decided, exact, or repeating an earlier fact), unrelated facts, and facts citing turns of
    more than one user (or of a user and an unlabelled conversation). An ``update`` supersedes
    the named entries shown for that fact (each by the first fact naming it); every other id named
    is ``unknown``.

    Raises:
        InvalidValue, InvalidCategory: a fact breaks an entry rule (too long, bad tags, bad path).
    """
    chosen: dict[int, Decision] = {}
    for decision in decisions:
        chosen.setdefault(decision.fact, decision)
    unknown: dict[str, None] = {}
    replaced: dict[str, MemoryEntry] = {}
    created: dict[tuple[str, str | None], NewEntry] = {}
    dropped = 0
    for n, (fact, shown_list) in enumerate(zip(facts, similar, strict=True), 1):
        shown = {e.id: e for e in shown_list}
        decision = chosen.get(n, Decision(n, "add"))
        named = list(dict.fromkeys(i.strip().lower() for i in decision.ids if i.strip()))
        unknown.update((i, None) for i in named if i not in shown)
        messages = tuple(dict.fromkeys(i.strip() for i in fact.source_ids if i.strip() in turns))
        category = proposed_category(fact.category)
        key = (normalise_text(fact.content), None if category is None else category.lower())
        subjects = {turns[m].get("subject") for m in messages}
        if _dropped(fact, messages, decision, shown.values()) or key in created or len(subjects) != 1:
            dropped += 1
            continue
        supersedes: tuple[str, ...] = ()
        if decision.action == "update":
            supersedes = tuple(i for i in named if i in shown and i not in replaced)
            replaced.update((i, shown[i]) for i in supersedes)
        entry = _entry(fact, messages, turns, subjects.pop(), now, make_id)
        created[key] = NewEntry(entry, (), supersedes, messages)
    return Plan("extract", (), tuple(created.values()), tuple(unknown), dropped, tuple(replaced.values()))


def run_extract(dreamer: _Pass, *, sessions: Sequence[str] | None) -> Extraction | None:
    """The extract pass of ``dreamer``'s scope (see the module docstring), up to its plan; None
    when there is no new turn (of ``sessions``, when given). Nothing is written here: the dreamer
    applies the plan, its record and the cursor move in one batch.

    Raises:
        InvalidConfiguration: no chat model or no turn log.
        InvalidValue: ``sessions`` is not a list of session ids.
    """
    if dreamer.model is None or (dreamer.turns is None and dreamer.conversations is None):
        raise InvalidConfiguration("extract needs a chat model and conversations (conversations=...)")
    if isinstance(sessions, str) or not (sessions is None or all(isinstance(s, str) for s in sessions)):
        raise InvalidValue(f"sessions {sessions!r}: must be a list of session ids")
    memory, engine = dreamer.memory, dreamer.memory.engine
    read, raw = cursor.read(engine, memory.scope)
    readable = pass_turns(
        dreamer.user,
        sessions,
        conversations=dreamer.conversations,
        turns=dreamer.turns,
        since=None if read.again else read.at,
    )
    taken = cursor.new_turns(readable, read)[:EXTRACT_INPUT]
    if not taken:
        return None
    moved = cursor.advanced(read, taken)
    messages = extraction_prompt(dreamer.extract_directive, taken)
    asked = [*messages]
    try:
        facts = parse_facts(dreamer.ask(messages))
        # a search with vectors has no floor: the model is shown only memories above the gate
        gate = relevance_gate(memory.embedder is not None)
        similar = [
            memory.search(f.content, limit=SIMILAR, min_score=gate) if f.content.strip() else []
            for f in facts
        ]
        shown = [[hit.entry for hit in hits] for hits in similar]
        decisions: list[Decision] = []
        if any(shown):
            second = decision_prompt(
                dreamer.decision_directive, list(zip((f.content for f in facts), shown, strict=True))
            )
            asked += second
            decisions = parse_decisions(dreamer.ask(second))
        now = datetime.fromtimestamp(engine.clock.now(), UTC)
        by_id = {t["message_id"]: t for t in taken}
        plan: Plan | str = extraction_plan(facts, shown, decisions, by_id, now)
    except MODEL_FAILURES as exc:
        plan = f"{type(exc).__name__}: {exc}"
    keys = DreamKeys.of(engine, memory.scope)
    return Extraction(plan, prompt_digest(asked), lambda batch: moved.write(batch, keys, raw))
