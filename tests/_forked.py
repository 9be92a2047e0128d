"""Forks for the tests of what a child process made by ``fork`` inherits: work run in a child that
reports through its exit status, and a lock held by another thread of the parent at the fork."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Protocol


class _Lock(Protocol):
    def __enter__(self) -> object: ...

    def __exit__(self, *exc: object) -> None: ...


def in_child(work: Callable[[], bool], deadline: float = 60.0) -> bool:
    """Whether ``work()`` returned True in a child made by ``fork``. The child never returns into
    the caller; one still running after ``deadline`` seconds (stuck on something of its parent's) is
    killed, and the answer is False."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.12+: forking with threads alive
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        status = 1
        try:
            status = 0 if work() else 1
        finally:
            os._exit(status)
    until = time.monotonic() + deadline
    while (done := os.waitpid(pid, os.WNOHANG)) == (0, 0) and time.monotonic() < until:
        time.sleep(0.05)
    if done == (0, 0):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return False
    return os.waitstatus_to_exitcode(done[1]) == 0


@contextlib.contextmanager
def held_by_a_thread(lock: _Lock) -> Iterator[None]:
    """``lock`` held by another thread of this process throughout the block, as a thread caught in
    the middle of a call holds it when the process forks."""
    taken, done = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            taken.set()
            done.wait()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    taken.wait()
    try:
        yield
    finally:
        done.set()
        thread.join()
