"""The machinery of the async faces (:mod:`memstack.tiers.conversation.aio`): one core, two faces.

A face wraps its synchronous twin and offers the twin's methods as coroutines: each call runs the
twin's own method in a worker thread (:func:`asyncio.to_thread`), so no logic is written twice and
the event loop never blocks on storage. Each sync class declares its face next to itself (its
``aio`` property returns it), listing the methods with :class:`Twin`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = ["Face", "Twin"]

S = TypeVar("S")
P = ParamSpec("P")
R = TypeVar("R")


class Face(Generic[S]):
    """The async face of the synchronous object ``sync``."""

    def __init__(self, sync: S) -> None:
        self.sync = sync

    def __repr__(self) -> str:
        return f"<async face of {self.sync!r}>"


class Twin(Generic[S, P, R]):
    """A method of the sync class, offered on its async face as a coroutine run in a thread."""

    def __init__(self, method: Callable[Concatenate[S, P], R]) -> None:
        self.method = method
        self.__doc__ = f"Async twin of :meth:`{method.__qualname__}` (same arguments, result and errors)."

    @overload
    def __get__(self, face: None, owner: type) -> Twin[S, P, R]: ...
    @overload
    def __get__(self, face: Face[S], owner: type) -> Callable[P, Coroutine[Any, Any, R]]: ...
    def __get__(
        self, face: Face[S] | None, owner: type
    ) -> Twin[S, P, R] | Callable[P, Coroutine[Any, Any, R]]:
        if face is None:
            return self
        sync, method = face.sync, self.method

        async def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return await asyncio.to_thread(method, sync, *args, **kwargs)

        call.__doc__ = self.__doc__
        return call
