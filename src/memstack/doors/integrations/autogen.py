"""An AutoGen memory over one memstack long-term scope (the ``autogen`` extra).

:class:`MemstackMemory` is an object of ``autogen_core.memory.Memory``: give it to any AutoGen agent
that takes memories (``AssistantAgent(..., memory=[MemstackMemory(mem.long_term("alice"))])``)::

    memory = MemstackMemory(mem.long_term("alice"), subject="alice")
    await memory.add(MemoryContent(content="Alice is vegetarian", mime_type=MemoryMimeType.TEXT))

``add`` saves one entry (text as it is, a dict as its JSON text; the MIME type and AutoGen's metadata
go to the entry's metadata, so a query gives the content back as it was added); ``query`` searches the
scope (BM25, or hybrid with an embedder); ``update_context`` searches with the newest user message of
the model context and adds the hits to it as one system message; ``clear`` deletes the scope's
entries; ``close`` leaves the memstack memory open (its owner closes it).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

from autogen_core import CancellationToken
from autogen_core.memory import Memory, MemoryContent, MemoryMimeType, MemoryQueryResult, UpdateContextResult
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage

from ...foundation.errors import InvalidValue
from ...foundation.keyspace import check_subject
from ...foundation.limits import short_repr
from ...tiers.longterm import LongTermMemory
from ._memory_tools import check_long_term

__all__ = ["MemstackMemory"]

_MIME: Final = "autogen_mime_type"
_META: Final = "autogen_metadata"


def _mime(value: MemoryMimeType | str) -> str:
    return value.value if isinstance(value, MemoryMimeType) else str(value)


class MemstackMemory(Memory):
    """AutoGen memory over a memstack :class:`~memstack.tiers.longterm.LongTermMemory`.

    Args:
        long_term: the scope that keeps the memories.
        subject: the end user they are about (``Memory.forget(subject=…)`` removes them).
        limit: memories a query returns at most.
        min_score: leave out hits scoring below this.

    Raises:
        TypeError: ``long_term`` is not a memstack LongTermMemory.
        InvalidValue: a malformed subject or a limit below 1.
    """

    def __init__(
        self,
        long_term: LongTermMemory,
        *,
        subject: str | None = None,
        limit: int = 5,
        min_score: float | None = None,
    ) -> None:
        self.long_term = check_long_term(long_term)
        self.subject = check_subject(subject) if subject is not None else None
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidValue(f"limit {short_repr(limit)}: must be an int of at least 1")
        self.limit = limit
        self.min_score = min_score

    def _save(self, content: MemoryContent) -> None:
        value = content.content
        if isinstance(value, str):
            text = value
        elif isinstance(value, dict):
            text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        else:
            raise InvalidValue(
                f"memory content of type {type(value).__name__}: only text and JSON objects are kept"
            )
        metadata: dict[str, Any] = {_MIME: _mime(content.mime_type)}
        if content.metadata:
            metadata[_META] = content.metadata
        self.long_term.save(content=text, metadata=metadata, subject=self.subject, actor="autogen")

    async def add(self, content: MemoryContent, cancellation_token: CancellationToken | None = None) -> None:
        """Save ``content`` as one entry of the scope."""
        await asyncio.to_thread(self._save, content)

    def _search(self, text: str) -> list[MemoryContent]:
        found = []
        for hit in self.long_term.search(text, limit=self.limit, min_score=self.min_score):
            entry = hit.entry
            stored = entry.metadata or {}
            mime = str(stored.get(_MIME, MemoryMimeType.TEXT.value))
            value: Any = json.loads(entry.content) if mime == MemoryMimeType.JSON.value else entry.content
            metadata = dict(stored.get(_META) or {})
            metadata.update({"id": entry.id, "score": hit.score})
            found.append(MemoryContent(content=value, mime_type=mime, metadata=metadata))
        return found

    async def query(
        self,
        query: str | MemoryContent = "",
        cancellation_token: CancellationToken | None = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        """The entries most relevant to ``query`` (its text), each with its ``id`` and ``score`` in
        the metadata; a blank query lists the newest."""
        text = query.content if isinstance(query, MemoryContent) else query
        if not isinstance(text, str):
            text = json.dumps(text, ensure_ascii=False, sort_keys=True) if isinstance(text, dict) else ""
        return MemoryQueryResult(results=await asyncio.to_thread(self._search, text))

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Add the memories relevant to the newest user message to ``model_context``."""
        messages = await model_context.get_messages()
        last = next((m for m in reversed(messages) if isinstance(m, UserMessage)), None)
        if last is None:
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        text = (
            last.content
            if isinstance(last.content, str)
            else " ".join(p for p in last.content if isinstance(p, str))
        )
        found = await asyncio.to_thread(self._search, text)
        if found:
            lines = "\n".join(f"{i}. {m.content!s}" for i, m in enumerate(found, 1))
            await model_context.add_message(SystemMessage(content=f"Relevant memories:\n{lines}"))
        return UpdateContextResult(memories=MemoryQueryResult(results=found))

    def _clear(self) -> None:
        self.long_term.delete_many([entry.id for entry in self.long_term.entries()])

    async def clear(self) -> None:
        """Delete every entry of the scope."""
        await asyncio.to_thread(self._clear)

    async def close(self) -> None:
        """Nothing to release: the memstack memory stays open for its owner to close."""
