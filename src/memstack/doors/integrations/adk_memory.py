"""Google ADK's memory service over memstack long-term memory (the ``adk`` extra).

:class:`MemstackMemoryService` keeps one long-term scope per ADK app and user
(:func:`memory_scope`), so a search never crosses users::

    runner = Runner(agent=agent, app_name="shop", session_service=MemstackSessionService(mem),
                    memory_service=MemstackMemoryService(mem))

``add_session_to_memory`` saves each event with text as one entry (``author: text``) whose id is the
event's, so adding a session again updates its entries instead of repeating them; ``search_memory``
searches the scope (BM25, or hybrid with an embedder); ``add_memory`` saves explicit memories and
``delete_memory`` deletes one by id. Entries are labelled with the user id as the memstack subject when
it fits the subject rule, so ``Memory.forget(subject=user_id)`` removes them.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from google.adk.events.event import Event
from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import Session
from google.genai import types

from ...foundation.keyspace.subjects import SUBJECT_RULE

if TYPE_CHECKING:
    from ... import Memory

__all__ = ["MemstackMemoryService", "memory_scope"]

_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,100}")


def memory_scope(app_name: str, user_id: str) -> str:
    """The long-term scope holding the memories of one ADK app and user."""
    return "adk-" + hashlib.sha256(f"{app_name}\0{user_id}".encode()).hexdigest()[:40]


def _text(content: types.Content | None) -> str:
    if content is None or not content.parts:
        return ""
    return " ".join(part.text for part in content.parts if part.text).strip()


class MemstackMemoryService(BaseMemoryService):
    """ADK memory in a :class:`memstack.Memory`'s long-term scopes.

    Args:
        memory: the memstack memory.
        limit: memories a search returns at most.
    """

    def __init__(self, memory: Memory, *, limit: int = 10) -> None:
        self.memory = memory
        self.limit = limit

    @staticmethod
    def _subject(user_id: str) -> str | None:
        return user_id if SUBJECT_RULE.fullmatch(user_id) else None

    def _save_events(
        self, app_name: str, user_id: str, events: Sequence[Event], session_id: str | None
    ) -> None:
        scope = self.memory.long_term(memory_scope(app_name, user_id))
        for event in events:
            text = _text(event.content)
            if not text:
                continue
            metadata: dict[str, Any] = {"author": event.author, "timestamp": event.timestamp}
            if session_id is not None:
                metadata["session_id"] = session_id
            scope.save(
                content=f"{event.author}: {text}",
                id=event.id if _ID.fullmatch(event.id or "") else None,
                category="adk/events",
                metadata=metadata,
                subject=self._subject(user_id),
                actor="adk",
            )

    async def add_session_to_memory(self, session: Session) -> None:
        """Save the session's events that carry text (again: updated, not repeated)."""
        await asyncio.to_thread(
            self._save_events, session.app_name, session.user_id, session.events, session.id
        )

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Save some events (a turn) of a session."""
        await asyncio.to_thread(self._save_events, app_name, user_id, events, session_id)

    def _save_memories(self, app_name: str, user_id: str, memories: Sequence[MemoryEntry]) -> None:
        scope = self.memory.long_term(memory_scope(app_name, user_id))
        for entry in memories:
            scope.save(
                content=_text(entry.content),
                id=entry.id if entry.id and _ID.fullmatch(entry.id) else None,
                category="adk/memories",
                metadata={"author": entry.author, **entry.custom_metadata}
                if entry.author
                else dict(entry.custom_metadata) or None,
                subject=self._subject(user_id),
                actor="adk",
            )

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Save explicit memories (their text parts) for the app and user."""
        await asyncio.to_thread(self._save_memories, app_name, user_id, memories)

    def _search(self, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        scope = self.memory.long_term(memory_scope(app_name, user_id))
        found = []
        for hit in scope.search(query, limit=self.limit):
            entry = hit.entry
            metadata = dict(entry.metadata or {})
            author = metadata.pop("author", None)
            stamp = metadata.pop("timestamp", None)
            when = datetime.fromtimestamp(stamp, UTC) if isinstance(stamp, (int, float)) else entry.created_at
            found.append(
                MemoryEntry(
                    id=entry.id,
                    author=author if isinstance(author, str) else None,
                    timestamp=when.isoformat(),
                    content=types.Content(
                        role="user" if author == "user" else "model", parts=[types.Part(text=entry.content)]
                    ),
                    custom_metadata={**metadata, "score": hit.score},
                )
            )
        return SearchMemoryResponse(memories=found)

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        """The memories of this app and user most relevant to ``query``."""
        return await asyncio.to_thread(self._search, app_name, user_id, query)

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        """Delete one memory by the id a search gave."""
        if memory_id is not None:
            scope = self.memory.long_term(memory_scope(app_name, user_id))
            await asyncio.to_thread(scope.delete, memory_id)
