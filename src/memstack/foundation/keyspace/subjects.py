"""Subjects: the end user a piece of data is about, so one call can forget them everywhere.

Every write of every tier takes an optional ``subject``. The label belongs to the value VERSION
written: it is stored inside the version (``"subject": "alice"`` in the entry, envelope, meta or
signal JSON), so a version Bob writes over Alice's is Bob's, and a copy of Alice's version (a dream
archive) keeps her label. Whole containers (a session, a conversation) are labelled at creation.

The write also registers the object in the subject's set ``subj:{subject}:objs`` (family
``subject.objects``): in the write's own atomic batch, or, on a Redis Cluster where that set lives
in another hash slot, just before the write, so the set is always a superset of what exists and a
crash never hides an object from ``forget(subject=…)``, which checks each object's label:

| member | object |
|---|---|
| ``session\\t{sid}`` | a whole session |
| ``conversation\\t{cid}`` | a whole conversation |
| ``long_term\\t{scope}\\t{id}`` | one long-term entry |
| ``working\\t{namespace}\\t{key}`` | one working-memory entry |
| ``shared\\t{board}\\t{key}`` | one key of a shared board |
| ``cache\\t{board}\\t{id}`` | one semantic-cache entry |
| ``document\\t{board}\\t{key}`` | one document of a board |
| ``feedback\\t{scope}`` | feedback signals of a long-term scope |
"""

from __future__ import annotations

import re
from typing import Any, Final, Protocol

from ..limits import check_match
from .classify import family_named

__all__ = [
    "LABEL",
    "OBJECTS",
    "SUBJECT_RULE",
    "check_subject",
    "label_of",
    "labelled",
    "member",
    "register",
    "subject_key",
]

_OBJECTS_SET: Final = family_named("subject.objects")
SUBJECT_RULE: Final = re.compile(r"[A-Za-z0-9_.@:+-]{1,256}")
LABEL: Final = "subject"
"""The JSON field a labelled version keeps its subject in."""
OBJECTS: Final = (
    "session",
    "conversation",
    "long_term",
    "working",
    "shared",
    "cache",
    "document",
    "feedback",
)
"""The kinds of object a subject's set names (the first field of a member)."""


class _Tagging(Protocol):
    """What :func:`register` needs of an engine (:class:`memstack.engines.Engine` has it)."""

    clustered: bool

    def tag(self, scope: str) -> str: ...

    def sadd(self, key: str, *members: str) -> Any: ...


def check_subject(subject: object) -> str:
    """``subject`` if it is 1-256 characters of ``[A-Za-z0-9_.@:+-]``.

    Raises:
        InvalidValue: anything else (the message names the value and the rule).
    """
    return check_match(subject, SUBJECT_RULE, "subject", "1-256 characters of [A-Za-z0-9_.@:+-]")


def subject_key(engine: _Tagging, subject: str) -> str:
    """The set of one subject's objects."""
    return _OBJECTS_SET.key(engine.tag, subject=subject)


def member(kind: str, *parts: str) -> str:
    """The member naming one object (``kind`` is one of :data:`OBJECTS`)."""
    return "\t".join((kind, *parts))


def register(engine: _Tagging, batch: Any, subject: str | None, kind: str, *parts: str) -> None:
    """Record that the object ``kind, parts`` is about ``subject``: in ``batch`` where one batch
    may span slots, else at once (before the caller's batch runs). A None subject does nothing."""
    if subject is None:
        return
    key, name = subject_key(engine, subject), member(kind, *parts)
    if engine.clustered:
        engine.sadd(key, name)
    else:
        batch.sadd(key, name)


def labelled(data: dict[str, Any], subject: str | None) -> dict[str, Any]:
    """``data`` with the label of ``subject`` (unchanged when None: an unlabelled version)."""
    if subject is not None:
        data[LABEL] = subject
    return data


def label_of(data: object) -> str | None:
    """The subject label of a decoded version (None: unlabelled, or not a JSON object)."""
    found = data.get(LABEL) if isinstance(data, dict) else None
    return found if isinstance(found, str) else None
