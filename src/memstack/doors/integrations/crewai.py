"""memstack as the storage of CrewAI's memory (the ``crewai`` extra).

CrewAI (1.x) lets a crew bring its own memory store through one interface: a
``crewai.memory.storage.interface.Storage`` (``save``, ``search``, ``reset``) given to
``ExternalMemory(storage=...)``, which the crew searches before each task (its hits go into the task's
prompt as "External memories") and saves each agent's final answer to::

    storage = MemstackStorage(mem.long_term("alice"), subject="alice")
    crew = Crew(agents=[...], tasks=[...], external_memory=ExternalMemory(storage=storage))

That is the interface chosen here: it is the one CrewAI designed for an outside store, and it leaves
the crew's decisions (what to save, when to search) to CrewAI. The same object also serves as the
``storage`` of ``ShortTermMemory``/``EntityMemory``, which call the same three methods.

``save`` keeps the value's text as one entry and CrewAI's metadata values that are plain scalars (its
``messages`` transcript is left out: the answer is what is remembered); ``search`` returns dicts with
``content`` (what CrewAI reads), ``id``, ``metadata`` and ``score``. CrewAI passes a
``score_threshold`` made for cosine similarities (0.6 by default); memstack's BM25 scores are on
another scale, so it is applied only with ``use_score_threshold=True`` (sensible with hybrid search,
whose scores are in [0, 1]). ``reset`` deletes the scope's entries.
"""

from __future__ import annotations

from typing import Any

from crewai.memory.storage.interface import Storage

from ...foundation.keyspace import check_subject
from ...tiers.longterm import LongTermMemory
from ._memory_tools import check_long_term

__all__ = ["MemstackStorage"]

_SCALARS = (str, int, float, bool)


class MemstackStorage(Storage):
    """CrewAI memory storage over a memstack :class:`~memstack.tiers.longterm.LongTermMemory`.

    Args:
        long_term: the scope that keeps the crew's memories.
        subject: the end user they are about (``Memory.forget(subject=…)`` removes them).
        category: the category of saved entries.
        use_score_threshold: apply CrewAI's ``score_threshold`` to memstack's scores.

    Raises:
        TypeError: ``long_term`` is not a memstack LongTermMemory.
        InvalidValue: a malformed subject.
    """

    def __init__(
        self,
        long_term: LongTermMemory,
        *,
        subject: str | None = None,
        category: str = "crewai",
        use_score_threshold: bool = False,
    ) -> None:
        self.long_term = check_long_term(long_term)
        self.subject = check_subject(subject) if subject is not None else None
        self.category = category
        self.use_score_threshold = use_score_threshold

    def save(self, value: Any, metadata: dict[str, Any]) -> None:
        """Save ``value``'s text with the scalar values of ``metadata``."""
        kept = {k: v for k, v in (metadata or {}).items() if isinstance(v, _SCALARS) and isinstance(k, str)}
        self.long_term.save(
            content=str(value),
            category=self.category,
            metadata=kept or None,
            subject=self.subject,
            actor="crewai",
        )

    def search(self, query: str, limit: int = 5, score_threshold: float = 0.6) -> list[Any]:
        """The entries most relevant to ``query``, as CrewAI reads them (``content`` first)."""
        minimum = score_threshold if self.use_score_threshold else None
        return [
            {
                "id": hit.entry.id,
                "content": hit.entry.content,
                "metadata": hit.entry.metadata or {},
                "score": hit.score,
            }
            for hit in self.long_term.search(query, limit=limit, min_score=minimum)
        ]

    def reset(self) -> None:
        """Delete every entry of the scope."""
        self.long_term.delete_many([entry.id for entry in self.long_term.entries()])
