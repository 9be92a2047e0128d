"""Async faces of the conversation tier: one core, two faces.

:class:`AsyncConversationStore` (and the compatible APIs' :class:`AsyncSlidingWindows` and
:class:`AsyncNodeMemory`, built the same way) wrap their synchronous twin (``store.aio``,
``windows.aio``, ``node.aio``) and offer the same methods,
with the same arguments, results and errors, as coroutines. No logic is written twice: the
engines are synchronous, so each call runs the twin's own method in a worker thread
(:func:`asyncio.to_thread`) and the event loop never blocks on storage. Both faces share the
twin's state (cached tails, pending node turns, the sweep thread), so they can be mixed freely.

>>> import asyncio
>>> from memstack.engines import open_engine
>>> from memstack.tiers.conversation import ConversationStore
>>> store = ConversationStore(open_engine("memory://"), counter="estimate")
>>> async def main() -> list[str]:
...     await store.aio.append("c1", "user", "Hello")
...     await store.aio.append("c1", "assistant", "Hi!")
...     return [m["content"] for m in await store.aio.history("c1", max_token_limit=100)]
>>> asyncio.run(main())
['Hello', 'Hi!']
"""

from __future__ import annotations

from .store import AsyncConversationStore

__all__ = ["AsyncConversationStore"]
