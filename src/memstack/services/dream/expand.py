"""The LLM expansion of ``save_memory``, run in the background through ``save_hook``.

The tool saves the raw content at once (no LLM call on a write path: a save must not wait on, or
fail with, a model). Afterwards a worker asks the chat model to rewrite it as one or more
self-contained entries; when it does, the raw entry is retired and the new ones created through a
dream plan, so the expansion has a record and can be undone like any pass. RockBot's fallback holds:
a model error, an unparseable answer or ``[]`` leave the raw content saved once, as it is.
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import UTC, datetime

from ...foundation.errors import ChatError, InvalidInput, MemstackError, ScriptExhausted
from ...llm.chat import ChatModel, message_text
from ...tiers.longterm import LongTermMemory, MemoryEntry
from .apply import apply_plan
from .parse import parse_expansion
from .plan import consolidation_plan
from .prompt import expansion_prompt, prompt_digest
from .record import DEFAULT_RETENTION, DreamRecord

__all__ = ["ExpansionHook"]

log = logging.getLogger("memstack.services.dream")

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _shared_executor() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memstack-expand")
        return _executor


def _new_executor_in_child() -> None:
    # After a fork, in the child: the parent's worker thread does not run here, yet its executor
    # counts it as idle and would queue every expansion for it, for ever.
    global _executor, _executor_lock
    _executor, _executor_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_new_executor_in_child)


@dataclass(eq=False)
class ExpansionHook:
    """A ``save_hook`` for :class:`~memstack.agent.tools.MemoryTools`: expands each saved entry.

    Args:
        memory: the scope the tool saves to.
        model: the chat model.
        background: run on a worker thread (True) or inline in the hook call (tests, scripts).
        retention: how long the expansion's record (with the raw entry) is kept.
    """

    memory: LongTermMemory
    model: ChatModel
    _: KW_ONLY
    background: bool = True
    retention: float = DEFAULT_RETENTION
    _pending: list[Future[DreamRecord | None]] = field(default_factory=list, init=False, repr=False)
    _pid: int = field(default_factory=os.getpid, init=False, repr=False)

    def __call__(self, entry: MemoryEntry) -> None:
        if not self.background:
            self.expand(entry)
            return
        self._own_pending().append(_shared_executor().submit(self.expand, entry))

    def flush(self, timeout: float | None = None) -> None:
        """Wait for the expansions this hook queued (in this process)."""
        pending, self._pending = self._own_pending(), []
        for future in pending:
            future.result(timeout)

    def _own_pending(self) -> list[Future[DreamRecord | None]]:
        if self._pid != os.getpid():  # a forked child: the parent runs what it queued before the fork
            self._pending, self._pid = [], os.getpid()
        return self._pending

    def expand(self, entry: MemoryEntry) -> DreamRecord | None:
        """Expand one saved entry now; the record of the applied plan, or None when the raw entry
        stays as it is (model failure, nothing usable, or the entry changed meanwhile). Never raises."""
        messages = expansion_prompt(entry.content, entry.category, entry.tags)
        try:
            reply = self.model.complete(messages)
            items = parse_expansion(message_text(reply))
            current = self.memory.get(entry.id)
            if current is None or current.content != entry.content:
                return None  # edited or deleted since: the user's version wins
            sourced = [replace(i, source_ids=(entry.id,)) for i in items if i.content.strip()]
            if not sourced:
                return None
            now = datetime.fromtimestamp(self.memory.engine.clock.now(), UTC)
            # a rewrite of the one note: retired into the record's archive, not kept as history
            plan = consolidation_plan([current], (), sourced, now, kind="expand", supersede=False)
            model_id = str(getattr(self.model, "model", type(self.model).__name__))
            return apply_plan(
                self.memory,
                plan,
                model=model_id,
                prompt_digest=prompt_digest(messages),
                retention=self.retention,
                force=True,  # retiring the one raw entry of a new scope is the point, not an accident
            )
        except (ChatError, ScriptExhausted, InvalidInput, OSError) as exc:
            log.warning("save_memory expansion of %s failed (%s); the raw content stays", entry.id, exc)
        except MemstackError as exc:
            log.warning("save_memory expansion of %s not applied: %s", entry.id, exc)
        return None
