"""The OpenAI Agents SDK over memstack (the ``openai-agents`` extra).

:class:`MemstackSession` is an object of the SDK's ``Session`` protocol whose items live in a memstack
conversation (the conversation id is the session id)::

    session = MemstackSession("chat-42", mem, subject="alice")
    await Runner.run(agent, "hello", session=session)

Each item is one message of the conversation: its JSON text is the content, so an item comes back
exactly as it was added. ``pop_item`` never rewrites the log: it appends a marker message whose parent
is the popped item's parent, so the conversation's active thread (what :meth:`get_items` and every
other door read) no longer holds the item. Every write names its message by the conversation's length
read just before, so two writers (threads or processes) that read the same length collide on the name
and the loser reads again: a pop never removes an item another agent added meanwhile, and concurrent
adds all land.

:func:`memory_tools` gives an agent ``save_memory`` and ``search_memory`` function tools over one
long-term scope (:mod:`memstack.doors.integrations.openai_agents_tools`).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, Final

from ...foundation.errors import AlreadyExists, Conflict, InvalidValue
from ...foundation.keyspace import check_subject
from ...foundation.limits import short_repr
from ...tiers.conversation import Message
from ...tiers.conversation.message import check_conversation_id

if TYPE_CHECKING:
    from agents import FunctionTool

    from ... import Memory
    from ...tiers.longterm import LongTermMemory

__all__ = ["MemstackSession", "memory_tools"]

_POPPED: Final = "popped "
"""Content of a pop marker (an item's content is always a JSON object, so never starts so)."""
_RETRIES: Final = 50
_ITEM_ROLES: Final = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def memory_tools(
    long_term: LongTermMemory, *, subject: str | None = None, limit: int = 5
) -> list[FunctionTool]:
    """``save_memory`` and ``search_memory`` function tools over ``long_term``
    (:func:`memstack.doors.integrations.openai_agents_tools.memory_tools`; the session itself does not
    need the SDK)."""
    from .openai_agents_tools import memory_tools as make

    return make(long_term, subject=subject, limit=limit)


def _role_of(item: dict[str, Any]) -> str:
    role = item.get("role")
    if isinstance(role, str) and role in _ITEM_ROLES:
        return _ITEM_ROLES[role]
    kind = item.get("type")
    return "tool" if isinstance(kind, str) and kind.endswith("_output") else "assistant"


def _encode(item: object) -> str:
    if not isinstance(item, dict):
        raise InvalidValue(f"session item {short_repr(item)}: must be a dict (a response input item)")
    try:
        return json.dumps(item, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValue(f"session item {short_repr(item)}: not JSON ({exc})") from None


def _is_item(message: Message) -> bool:
    return not message.content.startswith(_POPPED)


class MemstackSession:
    """An OpenAI Agents SDK session kept in the memstack conversation ``session_id``.

    Args:
        session_id: the conversation id (1-128 characters of ``[A-Za-z0-9_-]``).
        memory: the :class:`memstack.Memory` holding it.
        subject: the end user the session is about; ``Memory.forget(subject=…)`` removes it.
        session_settings: the SDK's ``SessionSettings`` (its ``limit`` is :meth:`get_items`'
            default).

    Raises:
        InvalidSessionId: a malformed session id.
        InvalidKey: a malformed subject.
    """

    def __init__(
        self, session_id: str, memory: Memory, *, subject: str | None = None, session_settings: Any = None
    ) -> None:
        self.session_id = check_conversation_id(session_id, "session_id")
        self.subject = check_subject(subject) if subject is not None else None
        self.session_settings = session_settings
        self._store = memory.conversations

    # -- reading -----------------------------------------------------------------------------
    def _items(self) -> list[Message]:
        return [m for m in self._store.thread(self.session_id) if _is_item(m)]

    def items(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The items, oldest first; ``limit``: the newest that many (0: none; None or negative: all)."""
        if limit is None and self.session_settings is not None:
            limit = getattr(self.session_settings, "limit", None)
        found = self._items()
        if limit is not None and limit >= 0:
            found = found[len(found) - limit :] if limit else []
        return [json.loads(m.content) for m in found]

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's items, oldest first (the latest ``limit`` of them when given)."""
        return await asyncio.to_thread(self.items, limit)

    # -- writing -----------------------------------------------------------------------------
    def _write(self, build: Any) -> Any:
        """Run ``build(length)`` until its messages, named after ``length``, land uncontested."""
        for _ in range(_RETRIES):
            length = self._store.count(self.session_id)
            try:
                return build(length)
            except AlreadyExists:
                continue  # another writer took this length: read the conversation again
        raise Conflict(f"session {self.session_id!r}: gave up after {_RETRIES} concurrent writes")

    def add(self, items: list[Any]) -> None:
        """Append ``items`` in one atomic batch.

        Raises:
            InvalidValue: an item that is not a JSON object (nothing is written).
        """
        drafts = [(content, _role_of(item)) for item in items for content in (_encode(item),)]
        if not drafts:
            return

        def build(length: int) -> None:
            self._store.extend(
                self.session_id,
                [
                    {"role": role, "content": content, "message_id": f"n{length + offset}"}
                    for offset, (content, role) in enumerate(drafts)
                ],
                subject=self.subject,
            )

        self._write(build)

    async def add_items(self, items: list[Any]) -> None:
        """Add items to the session's history."""
        await asyncio.to_thread(self.add, items)

    def pop(self) -> dict[str, Any] | None:
        """Remove and return the newest item (None when the session is empty)."""

        def build(length: int) -> dict[str, Any] | None:
            found = self._items()
            if not found:
                return None
            newest = found[-1]
            self._store.append(
                self.session_id,
                "system",
                _POPPED + newest.message_id,
                message_id=f"n{length}",
                parent_message_id=newest.parent_message_id,
                token_count=0,
                subject=self.subject,
            )
            item: dict[str, Any] = json.loads(newest.content)
            return item

        result: dict[str, Any] | None = self._write(build)
        return result

    async def pop_item(self) -> Any:
        """Remove and return the most recent item, or None."""
        return await asyncio.to_thread(self.pop)

    def clear(self) -> None:
        """Delete the conversation and every message in it."""
        self._store.delete(self.session_id)

    async def clear_session(self) -> None:
        """Clear all items for this session."""
        await asyncio.to_thread(self.clear)
