"""Dream passes over long-term memory: consolidation, preference inference, dedupe.

Every pass is a reviewable, reversible transaction: pure steps build a plan (entries to retire,
entries to create with their sources); a driver applies it in one atomic batch together with its
record, whose copy of every retired entry is the archive; ``undo`` puts the scope back.

>>> import memstack
>>> from memstack.services.dream import Dreamer
>>> with memstack.open("memory://") as mem:
...     memories = mem.long_term("alice")
...     _ = memories.save(content="Alice likes jazz.")
...     _ = memories.save(content="alice likes jazz")
...     dreamer = Dreamer(memories)
...     record = dreamer.dedupe()
...     print(len(memories), record.status)
...     report = dreamer.undo(record.id)
...     print(len(memories), report.restored == (record.retired[0].entry.id, record.retired[1].entry.id))
1 applied
2 True
"""

from __future__ import annotations

from .driver import PASSES, Dreamer
from .feedback import FeedbackLog, FeedbackSignal
from .plan import GUARD_RAILS, NewEntry, Plan
from .record import DEFAULT_RETENTION, DreamRecord
from .undo import UndoReport

__all__ = [
    "DEFAULT_RETENTION",
    "GUARD_RAILS",
    "PASSES",
    "DreamRecord",
    "Dreamer",
    "FeedbackLog",
    "FeedbackSignal",
    "NewEntry",
    "Plan",
    "UndoReport",
]
