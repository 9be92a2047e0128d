"""Subjects: the end user a piece of data is about, so one call can forget them everywhere.

Every tier's create/save call takes an optional ``subject``. The write registers
``{tier}\\t{object}`` in the subject's set ``subj:{tag}:objs``: in the write's own atomic batch, or,
on a Redis Cluster where that set lives in another hash slot, just before the write (as the session
registry does), so the set is always a superset of what exists and a crash never hides an object
from ``forget(subject=…)``, which skips members whose object is already gone.

| member | object |
|---|---|
| ``session\\t{sid}`` | a whole session |
| ``conversation\\t{cid}`` | a whole conversation |
| ``long_term\\t{scope}\\t{id}`` | one long-term entry |
| ``working\\t{namespace}\\t{key}`` | one working-memory entry |
| ``shared\\t{board}\\t{key}`` | one key of a shared board |
"""

from __future__ import annotations

import re
from typing import Any, Final

from ..engines import Engine
from ..errors import InvalidValue
from ..limits import short_repr

__all__ = ["PREFIX", "check_subject", "register", "subject_key"]

PREFIX: Final = "subj:"
SUBJECT_RULE: Final = re.compile(r"[A-Za-z0-9_.@:+-]{1,256}")


def check_subject(subject: object) -> str:
    """``subject`` if it is 1-256 characters of ``[A-Za-z0-9_.@:+-]``.

    Raises:
        InvalidValue: anything else (the message names the value and the rule).
    """
    if not isinstance(subject, str) or SUBJECT_RULE.fullmatch(subject) is None:
        raise InvalidValue(f"subject {short_repr(subject)}: must be 1-256 characters of [A-Za-z0-9_.@:+-]")
    return subject


def subject_key(engine: Engine, subject: str) -> str:
    """The set of one subject's objects."""
    return f"{PREFIX}{engine.tag(subject)}:objs"


def register(engine: Engine, batch: Any, subject: str | None, *parts: str) -> None:
    """Record that ``parts`` (tier, object…) is about ``subject``: in ``batch`` where one batch may
    span slots, else at once (before the caller's batch runs). A None subject does nothing."""
    if subject is None:
        return
    key, member = subject_key(engine, subject), "\t".join(parts)
    if engine.clustered:
        engine.sadd(key, member)
    else:
        batch.sadd(key, member)
