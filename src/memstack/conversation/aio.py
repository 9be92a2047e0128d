"""Async faces of the conversation tier: one core, two faces.

:class:`AsyncConversationStore`, :class:`AsyncSlidingWindows` and :class:`AsyncNodeMemory` wrap
their synchronous twin (``store.aio``, ``windows.aio``, ``node.aio``) and offer the same methods,
with the same arguments, results and errors, as coroutines. No logic is written twice: the
engines are synchronous, so each call runs the twin's own method in a worker thread
(:func:`asyncio.to_thread`) and the event loop never blocks on storage. Both faces share the
twin's state (cached tails, pending node turns, the sweep thread), so they can be mixed freely.

>>> import asyncio
>>> from memstack.engines import open_engine
>>> from memstack.conversation import ConversationStore
>>> store = ConversationStore(open_engine("memory://"), counter="estimate")
>>> async def main() -> list[str]:
...     await store.aio.append("c1", "user", "Hello")
...     await store.aio.append("c1", "assistant", "Hi!")
...     return [m["content"] for m in await store.aio.history("c1", max_token_limit=100)]
>>> asyncio.run(main())
['Hello', 'Hi!']
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

# The sync classes import this module only inside their ``aio`` property: no import cycle.
from .node_memory import NodeMemory
from .store import ConversationStore
from .window import SlidingWindows

__all__ = ["AsyncConversationStore", "AsyncNodeMemory", "AsyncSlidingWindows"]

S = TypeVar("S")
P = ParamSpec("P")
R = TypeVar("R")


class _Face(Generic[S]):
    """The async face of the synchronous object ``sync``."""

    def __init__(self, sync: S) -> None:
        self.sync = sync

    def __repr__(self) -> str:
        return f"<async face of {self.sync!r}>"


class _Twin(Generic[S, P, R]):
    """A method of the sync class, offered on its async face as a coroutine run in a thread."""

    def __init__(self, method: Callable[Concatenate[S, P], R]) -> None:
        self.method = method
        self.__doc__ = f"Async twin of :meth:`{method.__qualname__}` (same arguments, result and errors)."

    @overload
    def __get__(self, face: None, owner: type) -> _Twin[S, P, R]: ...
    @overload
    def __get__(self, face: _Face[S], owner: type) -> Callable[P, Coroutine[Any, Any, R]]: ...
    def __get__(
        self, face: _Face[S] | None, owner: type
    ) -> _Twin[S, P, R] | Callable[P, Coroutine[Any, Any, R]]:
        if face is None:
            return self
        sync, method = face.sync, self.method

        async def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return await asyncio.to_thread(method, sync, *args, **kwargs)

        call.__doc__ = self.__doc__
        return call


class AsyncConversationStore(_Face[ConversationStore]):
    """:class:`~memstack.conversation.ConversationStore` for asyncio code (see the module docstring)."""

    append = _Twin(ConversationStore.append)
    extend = _Twin(ConversationStore.extend)
    delete = _Twin(ConversationStore.delete)
    count = _Twin(ConversationStore.count)
    conversations = _Twin(ConversationStore.conversations)
    get = _Twin(ConversationStore.get)
    messages = _Twin(ConversationStore.messages)
    thread = _Twin(ConversationStore.thread)
    thread_length = _Twin(ConversationStore.thread_length)
    history = _Twin(ConversationStore.history)
    history_text = _Twin(ConversationStore.history_text)


class AsyncSlidingWindows(_Face[SlidingWindows]):
    """:class:`~memstack.conversation.SlidingWindows` for asyncio code (see the module docstring)."""

    load = _Twin(SlidingWindows.load)
    save = _Twin(SlidingWindows.save)
    execute = _Twin(SlidingWindows.execute)
    messages = _Twin(SlidingWindows.messages)
    clear = _Twin(SlidingWindows.clear)
    sweep = _Twin(SlidingWindows.sweep)
    close = _Twin(SlidingWindows.close)


class AsyncNodeMemory(_Face[NodeMemory]):
    """:class:`~memstack.conversation.NodeMemory` for asyncio code (see the module docstring)."""

    add_messages = _Twin(NodeMemory.add_messages)
    flush = _Twin(NodeMemory.flush)
    clear = _Twin(NodeMemory.clear)
    exists = _Twin(NodeMemory.exists)
    document = _Twin(NodeMemory.document)
    thread_run_ids = _Twin(NodeMemory.thread_run_ids)
    get_history_prompt_messages = _Twin(NodeMemory.get_history_prompt_messages)
    get_history_prompt_text = _Twin(NodeMemory.get_history_prompt_text)
