"""A LlamaIndex memory block backed by memstack long-term memory (the ``llamaindex`` extra).

Messages that LlamaIndex's ``Memory`` flushes out of its short-term window are saved as long-term
entries (raw text, no LLM call); on each ``get`` the block recalls the entries most relevant to
the latest user message by BM25 (or hybrid, if the long-term memory has an embedder)::

    memory = Memory.from_defaults(session_id="s1", memory_blocks=[
        MemstackMemoryBlock(name="memstack", long_term=mem.long_term("alice"))])

The recall takes the search parameters every surface takes
(:class:`~memstack.tiers.longterm.search_request.SearchRequest`), as the block's keywords with the same
names: ``mode``, ``category``, ``tags``, ``created_after``, ``created_before``, ``metadata``,
``limit`` (``max_results`` is its old name; 5 by default), ``min_score`` and the others; the query is
the latest user message. They are checked when the block is made.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import ConfigDict, Field

from ...tiers.longterm import LongTermMemory
from ...tiers.longterm.search_request import search_request

__all__ = ["RECALL_LIMIT", "MemstackMemoryBlock"]

RECALL_LIMIT: Final = 5
"""Entries recalled per ``get`` when the block is given no ``limit``."""


class MemstackMemoryBlock(BaseMemoryBlock[str]):
    """LlamaIndex memory block over a :class:`~memstack.tiers.longterm.LongTermMemory`.

    Its recall options are the long-term search parameters, given by name as extra fields
    (``mode=``, ``category=``, ``limit=``…: the fields of
    :class:`~memstack.tiers.longterm.search_request.SearchRequest`, declared there and not here), with
    ``limit`` 5 unless given; ``max_results`` is the old name of ``limit``."""

    model_config = ConfigDict(extra="allow")

    long_term: Any = Field(description="The memstack LongTermMemory that stores and recalls entries.")
    save_category: str = Field(default="conversation", description="Category given to saved messages.")

    def model_post_init(self, context: Any) -> None:
        if not isinstance(self.long_term, LongTermMemory):
            raise TypeError(
                f"long_term must be a memstack LongTermMemory, got {type(self.long_term).__name__}"
            )
        search_request(None, **self._search_options())  # InvalidValue now rather than at the first get

    def _search_options(self) -> dict[str, Any]:
        options = dict(self.model_extra or {})
        if "max_results" in options:
            options["limit"] = options.pop("max_results")
        options.setdefault("limit", RECALL_LIMIT)
        return options

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = next(
            (m.content for m in reversed(messages or []) if m.role.value == "user" and m.content), None
        )
        hits = await asyncio.to_thread(self.long_term.search, query, **self._search_options())
        return "\n".join(f"- {hit.entry.content}" for hit in hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        for message in messages:
            text = (message.content or "").strip()
            if text:
                await asyncio.to_thread(
                    self.long_term.save, content=f"{message.role.value}: {text}", category=self.save_category
                )
