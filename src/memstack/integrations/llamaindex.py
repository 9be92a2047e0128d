"""A LlamaIndex memory block backed by memstack long-term memory (the ``llamaindex`` extra).

Messages that LlamaIndex's ``Memory`` flushes out of its short-term window are saved as long-term
entries (raw text, no LLM call); on each ``get`` the block recalls the entries most relevant to
the latest user message by BM25 (or hybrid, if the long-term memory has an embedder)::

    memory = Memory.from_defaults(session_id="s1", memory_blocks=[
        MemstackMemoryBlock(name="memstack", long_term=mem.long_term("alice"))])
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import Field

from ..longterm import LongTermMemory

__all__ = ["MemstackMemoryBlock"]


class MemstackMemoryBlock(BaseMemoryBlock[str]):
    """LlamaIndex memory block over a :class:`~memstack.longterm.LongTermMemory`."""

    long_term: Any = Field(description="The memstack LongTermMemory that stores and recalls entries.")
    max_results: int = Field(default=5, ge=1, description="Entries recalled per get.")
    category: str = Field(default="conversation", description="Category given to saved messages.")

    def model_post_init(self, context: Any) -> None:
        if not isinstance(self.long_term, LongTermMemory):
            raise TypeError(
                f"long_term must be a memstack LongTermMemory, got {type(self.long_term).__name__}"
            )

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = next(
            (m.content for m in reversed(messages or []) if m.role.value == "user" and m.content), None
        )
        hits = await asyncio.to_thread(self.long_term.search, query, max_results=self.max_results)
        return "\n".join(f"- {hit.entry.content}" for hit in hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        for message in messages:
            text = (message.content or "").strip()
            if text:
                await asyncio.to_thread(
                    self.long_term.save, content=f"{message.role.value}: {text}", category=self.category
                )
