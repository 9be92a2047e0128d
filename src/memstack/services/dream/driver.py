"""``Dreamer``: the passes over one scope (consolidation, preferences, dedupe, extract) and their
records.

Each pass runs on its own conditions: consolidation needs at least 2 entries and a model;
preference inference and extract need a model and new turns of the pass's user (their
conversations and turn-log entries, never another user's: :mod:`.sources`), each pass reading from
where it stopped in this scope (its cursor); dedupe needs neither a model nor anything else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...engines.base import Batch
from ...foundation.errors import Conflict, DreamRefused, InvalidConfiguration, InvalidInput
from ...foundation.keyspace import check_subject
from ...llm.chat import ChatModel, message_text
from ...tiers.longterm import LongTermMemory
from ...tiers.longterm.ann_exact import float_vectors
from ...tiers.longterm.entry import current_at
from ...tiers.longterm.index_cache import scope_cache
from ...tiers.longterm.similar import DedupeMode, check_mode, duplicate_groups
from . import cursor, lease
from .apply import apply_plan, skip_record
from .directives import CONSOLIDATION, EXTRACTION, EXTRACTION_DECISIONS, PREFERENCES, load_directive
from .extract import run_extract
from .feedback import FeedbackLog
from .keys import DreamKeys
from .parse import MODEL_FAILURES, parse_consolidation, parse_preferences
from .plan import Plan, consolidation_plan, dedupe_plan, preference_plan
from .prompt import consolidation_prompt, preference_prompt, prompt_digest
from .record import DEFAULT_RETENTION, DreamRecord, RecordStore, new_record_id
from .sources import pass_turns
from .undo import UndoReport, undo

if TYPE_CHECKING:
    from ...tiers.conversation import ConversationStore, TurnMemory
    from ..tiers import Tiers

__all__ = ["CONSOLIDATION_INPUT", "MIN_ENTRIES", "PASSES", "Dreamer", "prompt_digest"]

log = logging.getLogger("memstack.services.dream")

CONSOLIDATION_INPUT: Final = 1000
"""The most recent entries shown to the consolidation model."""
MIN_ENTRIES: Final = 2
"""Consolidation is skipped below this many entries."""
PASSES: Final = ("consolidate", "preferences", "dedupe", "extract")


class Dreamer:
    """The dream passes of one long-term scope.

    Args:
        memory: the scope's :class:`~memstack.tiers.longterm.LongTermMemory`.
        model: a chat model (:class:`~memstack.llm.chat.ChatClient`, ``ScriptedChatModel``); the
            LLM passes need one, ``dedupe`` does not.
        turns: the turn log; its entries labelled with ``user`` are the user's turns too.
        conversations: the conversation store: the conversations registered for ``user`` are
            what the preferences and extract passes read.
        user: whose turns the preferences and extract passes read (default: the scope's name,
            as a user's memories live in the scope named after them); never another user's.
        directive, preference_directive, extract_directive, decision_directive: paths replacing
            the packaged ``dream.md``, ``pref-dream.md``, ``extract.md``, ``extract-decide.md``.
        retention: seconds records and archived entries are kept (default 30 days).

    Raises:
        InvalidConfiguration: a directive path cannot be read, or a retention <= 0.
    """

    def __init__(
        self,
        memory: LongTermMemory,
        *,
        model: ChatModel | None = None,
        turns: TurnMemory | None = None,
        conversations: ConversationStore | None = None,
        user: str | None = None,
        directive: str | Path | None = None,
        preference_directive: str | Path | None = None,
        extract_directive: str | Path | None = None,
        decision_directive: str | Path | None = None,
        retention: float = DEFAULT_RETENTION,
    ) -> None:
        if not retention > 0:
            raise InvalidConfiguration(f"retention {retention!r}: must be > 0 seconds")
        self.memory, self.model, self.turns, self.retention = memory, model, turns, float(retention)
        if conversations is None and turns is not None:  # the turn log's turns live in conversations
            from ...tiers.conversation import ConversationStore

            conversations = ConversationStore(turns.engine)
        self.conversations = conversations
        self.user = check_subject(user if user is not None else memory.scope)
        self.directive = load_directive(CONSOLIDATION, directive)
        self.preference_directive = load_directive(PREFERENCES, preference_directive)
        self.extract_directive = load_directive(EXTRACTION, extract_directive)
        self.decision_directive = load_directive(EXTRACTION_DECISIONS, decision_directive)
        self.feedback = FeedbackLog(memory.engine, memory.scope)
        self.records = RecordStore(memory.engine, memory.scope)

    @classmethod
    def over(cls, tiers: Tiers, scope: str, *, model: ChatModel | None, user: str | None) -> Dreamer:
        """The passes of ``scope`` in ``tiers``, reading the turns and conversations of ``user``
        there (None: the scope's name)."""
        return cls(
            tiers.long_term(scope),
            model=model,
            turns=tiers.turns,
            conversations=tiers.conversations,
            user=user,
        )

    @property
    def scope(self) -> str:
        return self.memory.scope

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.memory.engine.clock.now(), UTC)

    def _model_id(self) -> str | None:
        return None if self.model is None else str(getattr(self.model, "model", type(self.model).__name__))

    def ask(self, messages: list[dict[str, Any]]) -> str:
        """The model's answer text to ``messages``.

        Raises:
            InvalidConfiguration: no model.
            ChatError, ScriptExhausted, OSError: the model failed.
        """
        if self.model is None:
            raise InvalidConfiguration("this pass needs a chat model (model=...)")
        return message_text(self.model.complete(messages), self._model_id() or "chat model")

    def finish(
        self,
        kind: str,
        plan_or_reason: Plan | str,
        digest: str | None,
        *,
        dry_run: bool,
        force: bool,
        also: Callable[[Batch], None] | None = None,
    ) -> DreamRecord:
        """Apply a pass's plan (``also`` queues more of its writes on the same batch), or record
        why it was skipped (a text); see the passes.

        Raises:
            DreamRefused: a guard rail, unless ``force`` (a ``refused`` record is kept).
        """
        model = self._model_id() if kind != "dedupe" else None
        if isinstance(plan_or_reason, str):
            log.warning("dream %s pass on scope %r skipped: %s", kind, self.scope, plan_or_reason)
            if dry_run:  # described, not stored
                return DreamRecord(
                    new_record_id(),
                    self.scope,
                    kind,
                    "skipped",
                    self.memory.engine.clock.now(),
                    model,
                    digest,
                    reason=plan_or_reason,
                )
            return skip_record(
                self.memory,
                kind,
                "skipped",
                plan_or_reason,
                model=model,
                prompt_digest=digest,
                retention=self.retention,
            )
        try:
            return apply_plan(
                self.memory,
                plan_or_reason,
                model=model,
                prompt_digest=digest,
                retention=self.retention,
                force=force,
                dry_run=dry_run,
                also=also,
            )
        except Conflict as exc:  # the scope moved under a slow model: this cycle is skipped, not failed
            if dry_run:
                raise
            log.warning("dream %s pass on scope %r skipped: %s", kind, self.scope, exc)
            return skip_record(
                self.memory,
                kind,
                "skipped",
                f"Conflict: {exc}",
                model=model,
                prompt_digest=digest,
                retention=self.retention,
            )
        except DreamRefused as exc:
            if not dry_run:
                skip_record(
                    self.memory,
                    kind,
                    "refused",
                    str(exc),
                    model=model,
                    prompt_digest=digest,
                    retention=self.retention,
                )
            raise

    # -- passes ------------------------------------------------------------------------------
    def consolidate(self, *, dry_run: bool = False, force: bool = False) -> DreamRecord | None:
        """Merge, refine and retire entries; None when not run (< 2 entries).

        An answer that cannot be used (model error, no JSON, bad shape) skips the cycle: the
        returned record says ``skipped`` and why.

        Raises:
            InvalidConfiguration: no model.
            DreamRefused: a guard rail, unless ``force`` (a ``refused`` record is kept).

        An entry to retire that changed while the model was thinking skips the cycle too
        (``skipped``, reason ``Conflict: …``): the plan was made from stale text.
        """
        if self.model is None:
            raise InvalidConfiguration("consolidate needs a chat model (model=...)")
        entries = [h.entry for h in self.memory.search(None, max_results=CONSOLIDATION_INPUT)]
        if len(entries) < MIN_ENTRIES:
            log.info("dream: scope %r has %d entries; consolidation skipped", self.scope, len(entries))
            return None
        messages = consolidation_prompt(self.directive, entries, self.feedback.recent())
        digest = prompt_digest(messages)
        try:
            to_delete, to_save = parse_consolidation(self.ask(messages))
            plan: Plan | str = consolidation_plan(entries, to_delete, to_save, self._now())
        except MODEL_FAILURES as exc:
            plan = f"{type(exc).__name__}: {exc}"
        return self.finish("consolidate", plan, digest, dry_run=dry_run, force=force)

    def infer_preferences(self, *, dry_run: bool = False) -> DreamRecord | None:
        """Infer preferences from the user's turns this scope has not read for them yet; None when
        there is none. The pass's cursor moves with the plan it applies; an answer that cannot be
        used skips the pass (recorded) and the same turns are read again next time.

        Raises:
            InvalidConfiguration: no model, or neither a turn log nor conversations.
        """
        if self.model is None or (self.turns is None and self.conversations is None):
            raise InvalidConfiguration(
                "infer_preferences needs a chat model and conversations (conversations=...)"
            )
        keys = DreamKeys.of(self.memory.engine, self.scope)
        read, raw = cursor.read(self.memory.engine, self.scope, key=keys.pref_cursor)
        since = None if read.again else read.at
        readable = pass_turns(
            self.user, None, conversations=self.conversations, turns=self.turns, since=since
        )
        entries = cursor.new_turns(readable, read)
        if not entries:
            return None
        messages = preference_prompt(self.preference_directive, entries, self.feedback.recent())
        digest = prompt_digest(messages)
        try:
            plan: Plan | str = preference_plan(parse_preferences(self.ask(messages)), self._now())
        except MODEL_FAILURES as exc:
            plan = f"{type(exc).__name__}: {exc}"
        moved = cursor.advanced(read, entries)
        also = (lambda batch: moved.write(batch, keys, raw, key=keys.pref_cursor)) if not dry_run else None
        return self.finish("preferences", plan, digest, dry_run=dry_run, force=False, also=also)

    def dedupe(
        self, *, mode: DedupeMode = "near", dry_run: bool = False, force: bool = False
    ) -> DreamRecord | None:
        """Merge duplicates already stored, without a model; None when there are none.

        Raises:
            InvalidValue: an unknown mode.
            DreamRefused: a guard rail, unless ``force``.
        """
        check_mode(mode)
        now = self.memory.engine.clock.now()
        entries = [e for e in self.memory.entries() if current_at(e, now)]  # history is no duplicate
        vectors, embedder = None, self.memory.embedder
        if embedder is not None:  # as stored, not a graph-backed cache's 4-bit rows
            cache = scope_cache(self.memory.engine, self.scope)
            vectors = float_vectors(self.memory.engine, self.memory.keys, cache, embedder)
        groups = duplicate_groups(entries, mode, vectors)
        if not groups:
            return None
        return self.finish("dedupe", dedupe_plan(groups, self._now()), None, dry_run=dry_run, force=force)

    def extract(
        self, *, dry_run: bool = False, force: bool = False, sessions: Sequence[str] | None = None
    ) -> DreamRecord | None:
        """Learn from the turns of the turn log this scope has not read yet (see
        :mod:`memstack.services.dream.extract`): candidate facts from the model, each decided against the
        most similar stored memories (add, update superseding them, duplicate, unrelated), saved
        with the source message ids as provenance. None when there is no new turn. ``sessions``:
        only the turns of these sessions (the others' turns are passed over for good by this scope).

        An answer that cannot be used (model error, malformed JSON, bad shape) skips the pass: the
        returned record says ``skipped`` and why, and the same turns are read again next time.
        ``dry_run`` describes the plan and writes nothing (no record, the cursor stays).

        Raises:
            InvalidConfiguration: no model or no turn log.
            InvalidValue: ``sessions`` not a list of session ids.
            DreamRefused: a guard rail (more than half of the scope superseded, only ids that do
                not exist named), unless ``force`` (a ``refused`` record is kept).
        """
        done = run_extract(self, sessions=sessions)
        if done is None:
            return None
        return self.finish("extract", done.plan, done.digest, dry_run=dry_run, force=force, also=done.also)

    def run(
        self,
        passes: Sequence[str] = ("consolidate", "preferences"),
        *,
        dry_run: bool = False,
        force: bool = False,
    ) -> list[DreamRecord]:
        """Run ``passes`` in order under the scope's lease; the records of those that ran.

        Raises:
            InvalidValue: an unknown pass name.
            Conflict: another process holds the scope's lease.
            InvalidConfiguration, DreamRefused: as the passes.
        """
        for name in passes:
            if name not in PASSES:
                raise InvalidInput(f"pass {name!r}: must be one of {', '.join(PASSES)}")
        done: list[DreamRecord] = []
        with lease.hold(self.memory.engine, self.scope):
            for name in passes:
                if name == "consolidate":
                    record = self.consolidate(dry_run=dry_run, force=force)
                elif name == "preferences":
                    record = self.infer_preferences(dry_run=dry_run)
                elif name == "extract":
                    record = self.extract(dry_run=dry_run, force=force)
                else:
                    record = self.dedupe(dry_run=dry_run, force=force)
                if record is not None:
                    done.append(record)
        return done

    # -- records -----------------------------------------------------------------------------
    def history(self, limit: int = 50) -> list[DreamRecord]:
        """The scope's records, newest first."""
        return self.records.history(limit)

    def show(self, record_id: str) -> DreamRecord:
        """One record.

        Raises:
            InvalidKey, EntryNotFound: see :meth:`RecordStore.read`.
        """
        return self.records.read(record_id)[0]

    def undo(self, record_id: str) -> UndoReport:
        """Undo an applied pass (see :func:`memstack.services.dream.undo.undo`).

        Raises:
            InvalidKey, EntryNotFound, Conflict: see :func:`memstack.services.dream.undo.undo`.
        """
        return undo(self.memory, record_id)
