"""Active-thread extraction over plain data (Dify's newest ``extract_thread_messages``).

Input is the messages of one conversation **newest first**. The first message is the thread's
leaf; from there the walk follows ``parent_message_id``:

* a message is taken when it is the awaited parent, or when the walk is in legacy mode (the
  awaited parent is :data:`UUID_NIL`: "my parent is simply the previous message"), in which case
  every older message is taken;
* a message with a falsy parent (None or ``""``) is a thread root: it is taken and the walk stops;
* messages of other branches are skipped — including parentless roots of other branches (the older
  upstream variant took those and stopped: a quirk memstack does not reproduce);
* if the awaited parent is not in the input, the walk simply ends (a partially loaded thread).

:class:`ThreadWalk` is the same walk fed page by page, so a store can read the newest messages a
page at a time and stop as soon as the thread is complete.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Generic, Protocol, TypeVar

__all__ = ["UUID_NIL", "ThreadWalk", "Threaded", "extract_thread"]

UUID_NIL: Final = "00000000-0000-0000-0000-000000000000"


class Threaded(Protocol):
    """Anything with a message id and a parent id."""

    @property
    def message_id(self) -> str: ...

    @property
    def parent_message_id(self) -> str | None: ...


T = TypeVar("T", bound=Threaded)


class ThreadWalk(Generic[T]):
    """The extraction as a resumable walk: :meth:`feed` older and older messages until ``done``.

    Attributes:
        thread: the thread so far, newest first.
        done: True once a root was taken (no older message can join the thread).
    """

    def __init__(self) -> None:
        self.thread: list[T] = []
        self.done = False
        self._started = False
        self._next: str | None = None

    def feed(self, messages: Iterable[T]) -> bool:
        """Walk ``messages`` (newest first, each older than everything fed before); return ``done``."""
        for message in messages:
            if self.done:
                break
            if self._started and self._next not in (message.message_id, UUID_NIL):
                continue  # another branch
            self._started = True
            self.thread.append(message)
            if not message.parent_message_id:
                self.done = True
            else:
                self._next = message.parent_message_id
        return self.done


def extract_thread(messages_newest_first: Iterable[T]) -> list[T]:
    """The active thread of ``messages_newest_first`` (newest first), as the module describes."""
    walk: ThreadWalk[T] = ThreadWalk()
    walk.feed(messages_newest_first)
    return walk.thread
