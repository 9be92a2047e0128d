"""Forgetting one session's entries of the shared turn log (and of its JSONL mirror).

The log is one list every session appends to. It is rewritten without a read-modify-write race
against appends: after reading its first ``n`` entries, ONE batch trims exactly those ``n`` from
the head and pushes back the kept ones in front, so anything appended meanwhile stays, in order.
Two rewrites (two forgets at once, or a forget and a retention trim) would each trim ``n``, so
they take a short lease first (family ``turns.lease``).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from ...foundation.errors import Conflict
from .turns import SESSION_RULE, TurnMemory

__all__ = ["forget_session_turns", "lease", "turn_leftovers"]

LEASE_MS: Final = 30_000
_LEASE_TRIES: Final = 100


@contextlib.contextmanager
def lease(turns: TurnMemory) -> Iterator[None]:
    """Hold the turn log's rewrite lease (one rewrite or trim at a time).

    Raises:
        Conflict: another holder kept it for about five seconds.
    """
    key, token = turns.lease_key, uuid.uuid4().hex
    for _ in range(_LEASE_TRIES):
        if turns.engine.set(key, token, nx=True, px=LEASE_MS):
            break
        time.sleep(0.05)  # another forget holds the log for at most LEASE_MS; a real wait, no clock
    else:
        raise Conflict("the turn log is being rewritten by another forget; run the forget again")
    try:
        yield
    finally:
        with turns.engine.batch() as batch:
            batch.require_equal(key, token)
            batch.delete(key)


def _of_session(line: str, session_id: str) -> bool:
    if session_id not in line:  # most lines are other sessions': no JSON parse for them
        return False
    try:
        return bool(json.loads(line).get("session_id") == session_id)
    except (ValueError, AttributeError):  # a foreign line is kept, never guessed at
        return False


def forget_session_turns(turns: TurnMemory, session_id: str) -> int:
    """Remove ``session_id``'s turns: its own list, its index entry, its log entries and JSONL
    mirror lines; returns how many records went (0 for an id this tier never accepts)."""
    if not SESSION_RULE.fullmatch(session_id):
        return 0
    engine = turns.engine
    removed = 0
    with engine.batch() as batch:
        batch.llen(turns.session_key(session_id))
        batch.delete(turns.session_key(session_id))
        batch.srem(turns.sessions_key, session_id)
    assert batch.result is not None
    removed += int(batch.result.results[0])
    log = engine.lrange(turns.log_key, 0, -1)
    if any(_of_session(line, session_id) for line in log):
        with lease(turns):
            log = engine.lrange(turns.log_key, 0, -1)
            kept = [line for line in log if not _of_session(line, session_id)]
            with engine.batch() as batch:
                batch.ltrim(turns.log_key, len(log), -1)
                if kept:
                    batch.lpush(turns.log_key, *reversed(kept))
            removed += len(log) - len(kept)
    if turns.log_path is not None:
        removed += _rewrite_mirror(turns.log_path, session_id)
    return removed


def turn_leftovers(turns: TurnMemory, session_id: str) -> int:
    """The session's turn list, its index entry and its log entries still stored."""
    if not SESSION_RULE.fullmatch(session_id):
        return 0
    engine = turns.engine
    left = int(engine.exists(turns.session_key(session_id))) + int(
        engine.sismember(turns.sessions_key, session_id)
    )
    return left + sum(1 for line in engine.lrange(turns.log_key, 0, -1) if _of_session(line, session_id))


def _rewrite_mirror(path: Path, session_id: str) -> int:
    """The JSONL mirror without the session's lines, replaced atomically (temp file + rename)."""
    if not path.exists():
        return 0
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not _of_session(line, session_id)]
    if len(kept) == len(lines):
        return 0
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    temp.write_text("".join(kept), encoding="utf-8")
    os.replace(temp, path)
    return len(lines) - len(kept)
