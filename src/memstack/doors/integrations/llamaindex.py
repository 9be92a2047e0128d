"""A LlamaIndex memory block backed by memstack long-term memory (the ``llamaindex`` extra).

Messages that LlamaIndex's ``Memory`` flushes out of its short-term window are saved as long-term
entries (raw text, no LLM call); on each ``get`` the block recalls the entries most relevant to
the latest user message by BM25 (or hybrid, if the long-term memory has an embedder)::

    memory = Memory.from_defaults(session_id="s1", memory_blocks=[
        MemstackMemoryBlock(name="memstack", long_term=mem.long_term("alice"))])

The recall takes the search parameters every surface takes (README: search parameters), as the
block's fields with the same names: ``mode``, ``category``, ``tags``, ``created_after``,
``created_before``, ``metadata``, ``limit`` (``max_results`` is its old name) and ``min_score``;
the query is the latest user message. They are checked when the block is made.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import AliasChoices, Field

from ...tiers.longterm import LongTermMemory
from ...tiers.longterm.search_request import search_request

__all__ = ["MemstackMemoryBlock"]


class MemstackMemoryBlock(BaseMemoryBlock[str]):
    """LlamaIndex memory block over a :class:`~memstack.tiers.longterm.LongTermMemory`."""

    long_term: Any = Field(description="The memstack LongTermMemory that stores and recalls entries.")
    save_category: str = Field(default="conversation", description="Category given to saved messages.")
    mode: str = Field(default="auto", description="auto, bm25 or hybrid.")
    category: str | None = Field(default=None, description="Recall only this category and below.")
    tags: list[str] | None = Field(default=None, description="Recall only entries with every tag.")
    created_after: datetime | None = Field(default=None, description="Recall only entries created after.")
    created_before: datetime | None = Field(default=None, description="Recall only entries created before.")
    metadata: dict[str, Any] | None = Field(default=None, description="Metadata every entry recalled has.")
    limit: int = Field(
        default=5, ge=1, validation_alias=AliasChoices("limit", "max_results"), description="Entries per get."
    )
    min_score: float | None = Field(default=None, description="Drop entries scoring below this.")

    def model_post_init(self, context: Any) -> None:
        if not isinstance(self.long_term, LongTermMemory):
            raise TypeError(
                f"long_term must be a memstack LongTermMemory, got {type(self.long_term).__name__}"
            )
        search_request(None, **self._search_options())  # InvalidValue now rather than at the first get

    def _search_options(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "category": self.category,
            "tags": self.tags,
            "created_after": self.created_after,
            "created_before": self.created_before,
            "metadata": self.metadata,
            "limit": self.limit,
            "min_score": self.min_score,
        }

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
