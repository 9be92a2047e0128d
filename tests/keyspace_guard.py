"""A pytest plugin (loaded by conftest.py): every key any test makes memstack write must belong to a
family of the keyspace registry (:mod:`memstack.foundation.keyspace`); a test that makes memstack write an
undeclared key fails.

Every batch the engines apply is seen (memory, SQLite, Redis, PostgreSQL; views and wrappers reach one of
them): the keys and channels of its write commands, attributed to the first caller outside the
engines. Keys a test writes itself through an engine (the conformance suite's ``k``, ``a``...) and
keys a dump import restores (whatever the dump held) are the caller's, not memstack's, and are
not checked.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from memstack.engines.base import BatchResult, Op
from memstack.engines.commands import COMMANDS, WRITES
from memstack.engines.memory import MemoryEngine
from memstack.engines.redis import RedisEngine
from memstack.engines.sqlite import SqliteEngine
from memstack.foundation.keyspace import family_of

_EXEMPT = ("memstack.engines", "memstack.services.transfer.dump")
"""Writers whose keys are not memstack's own choice (the seam itself, a dump import)."""
_lock = threading.Lock()
_undeclared: list[tuple[str, str]] = []


def _writer() -> str:
    """The module of the first frame outside the engines and this plugin."""
    frame = sys._getframe(2)
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if not name.startswith("memstack.engines") and name != __name__:
            return name
        frame = frame.f_back  # type: ignore[assignment] - None ends the walk
    return "?"


def written(ops: Sequence[Op]) -> Iterator[str]:
    """The keys and channels the write commands of ``ops`` name (malformed ops yield nothing:
    the engine refused them before writing)."""
    for op in ops:
        try:
            name, args = op
            command = COMMANDS[name]
        except (TypeError, ValueError, KeyError):
            continue
        if name not in WRITES or not isinstance(args, tuple):
            continue
        if command.keys == "all":
            yield from (a for a in args if isinstance(a, str))
        elif (command.keys == "first" or command.channel) and args and isinstance(args[0], str):
            yield args[0]


def _check(ops: Sequence[Op]) -> None:
    keys = [k for k in written(ops) if family_of(k)[1] is None]
    if not keys:
        return
    writer = _writer()
    if not writer.startswith("memstack.") or writer.startswith(_EXEMPT):
        return
    with _lock:
        _undeclared.extend((key, writer) for key in keys)


def _wrap(cls: Any) -> None:
    applied = cls.execute

    def execute(self: Any, ops: Sequence[Op]) -> BatchResult:
        result: BatchResult = applied(self, ops)
        _check(ops)
        return result

    cls.execute = execute


for _engine in (MemoryEngine, SqliteEngine, RedisEngine):
    _wrap(_engine)
if importlib.util.find_spec("psycopg") is not None:  # the `postgres` extra: without it no test runs it
    from memstack.engines.postgres import PostgresEngine

    _wrap(PostgresEngine)


@pytest.fixture(autouse=True)
def _every_written_key_is_declared() -> Iterator[None]:
    with _lock:
        _undeclared.clear()
    yield
    with _lock:
        found, _undeclared[:] = list(_undeclared), []
    if found:
        shown = ", ".join(f"{key!r} (by {writer})" for key, writer in sorted(set(found))[:10])
        pytest.fail(f"memstack wrote keys no keyspace family declares: {shown}", pytrace=False)
