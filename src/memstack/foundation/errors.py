"""The one exception tree of memstack.

Every error memstack raises on purpose is a :class:`MemstackError`. Where the meaning matches a
builtin, the error also derives from it, so ``except ValueError`` keeps working for callers that
do not know memstack::

    MemstackError
    ├── InvalidInput (ValueError)            bad input: the message names the value and the rule
    │   ├── InvalidSessionId
    │   ├── InvalidKey
    │   ├── InvalidCategory
    │   ├── InvalidValue                     not JSON-serialisable, too large, wrong shape
    │   │   ├── InvalidFilter                a search filter breaking the filter language
    │   │   └── InvalidRequest               a request that does not match its operation's schema
    │   ├── InvalidUrl                       an engine URL memstack cannot open
    │   └── InvalidConfiguration             settings that contradict each other or miss a field
    ├── NotFound (LookupError)
    │   ├── SessionNotFound                  unknown or expired session
    │   ├── EntryNotFound                    unknown id / key in a tier
    │   └── UnknownTool                      an agent tool name that is not in the tool list
    ├── AlreadyExists
    │   └── SessionExists
    ├── LimitReached
    │   ├── SessionLimitReached              the in-process session cap
    │   ├── NamespaceFull                    the working-memory cap of one namespace
    │   └── DreamRefused                     a dream plan broke a guard rail (too much retired, unknown ids)
    ├── Conflict                             optimistic concurrency: the version moved on
    ├── WaitTimeout (TimeoutError)           a blocking read gave up
    ├── NotANumber (TypeError)               increment of a value that is not a JSON number
    ├── EmbeddingError                       an embedding backend failed: unreachable, timed out, bad reply
    ├── ChatError                            a chat backend failed: unreachable, timed out, bad reply
    └── EngineError
        ├── EngineUnavailable (ConnectionError)  the storage engine cannot be reached
        │   └── EngineFull                   the engine refused a write: out of memory or disk
        ├── NotReplicated                    a write ran on the primary but too few replicas confirmed it
        ├── WrongType (TypeError)            a command met a key holding another type
        ├── CrossSlot                        one atomic batch spans two Redis Cluster slots
        └── EngineClosed                     the engine was used after ``close()``
"""

from __future__ import annotations

__all__ = [
    "AlreadyExists",
    "ChatError",
    "Conflict",
    "CrossSlot",
    "DreamRefused",
    "EmbeddingError",
    "EngineClosed",
    "EngineError",
    "EngineFull",
    "EngineUnavailable",
    "EntryNotFound",
    "InvalidCategory",
    "InvalidConfiguration",
    "InvalidFilter",
    "InvalidInput",
    "InvalidKey",
    "InvalidRequest",
    "InvalidSessionId",
    "InvalidUrl",
    "InvalidValue",
    "LimitReached",
    "MemstackError",
    "NamespaceFull",
    "NotANumber",
    "NotFound",
    "NotReplicated",
    "ScriptExhausted",
    "SessionExists",
    "SessionLimitReached",
    "SessionNotFound",
    "UnknownTool",
    "WaitTimeout",
    "WrongType",
]


class MemstackError(Exception):
    """Root of every error memstack raises on purpose."""


class InvalidInput(MemstackError, ValueError):
    """Input that breaks a documented rule; the message names the value and the rule."""


class InvalidSessionId(InvalidInput):
    """A session id that is not 1-128 characters of ``[A-Za-z0-9_-]``."""


class InvalidKey(InvalidInput):
    """A key that breaks the key rule of its tier."""


class InvalidCategory(InvalidInput):
    """A category path that is empty, absolute, contains ``..`` or a bad segment."""


class InvalidValue(InvalidInput):
    """A value that cannot be stored: not JSON-serialisable, too large, or of the wrong shape."""


class InvalidFilter(InvalidValue):
    """A search filter that breaks the filter language (:mod:`memstack.search.filters`): the
    message names the field and the operator."""


class InvalidRequest(InvalidValue):
    """A request that does not match its operation's schema: an unknown field, a missing one, or
    a value of the wrong JSON type (no ``"5"`` for 5, no ``true`` for 1). HTTP answers 422.

    Attributes:
        issues: ``(field, problem)`` pairs, one per field at fault, in the order found.
    """

    def __init__(self, message: str, issues: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.issues = issues


class InvalidUrl(InvalidInput):
    """An engine URL with an unknown scheme or malformed parts."""


class InvalidConfiguration(InvalidInput):
    """Settings that are missing a required field or contradict each other."""


class NotFound(MemstackError, LookupError):
    """The thing asked for does not exist (or has expired)."""


class SessionNotFound(NotFound):
    """The session is unknown, was deleted, or has expired."""


class EntryNotFound(NotFound):
    """An entry (memory id, working-memory key, message id) is unknown."""


class UnknownTool(NotFound):
    """An agent tool name that is not one of the tools offered."""


class AlreadyExists(MemstackError):
    """Creating something that already exists."""


class SessionExists(AlreadyExists):
    """``create`` of a session id that is live."""


class LimitReached(MemstackError):
    """A documented, named limit was reached."""


class SessionLimitReached(LimitReached):
    """The in-process engine holds its maximum number of live sessions."""


class NamespaceFull(LimitReached):
    """A working-memory namespace holds its maximum number of live entries."""


class DreamRefused(LimitReached):
    """A dream plan broke a guard rail (it retires more than the allowed share of a scope, or names
    only ids the scope does not hold); nothing was written. Pass ``force=True`` to apply it anyway."""


class Conflict(MemstackError):
    """A compare-and-set lost: the stored version is not the one the caller expected."""


class WaitTimeout(MemstackError, TimeoutError):
    """A blocking read did not see its key(s) before the deadline."""


class NotANumber(MemstackError, TypeError):
    """An increment met a stored value that is not a JSON number."""


class EmbeddingError(MemstackError):
    """An embedding backend failed: unreachable, timed out, refused the request or sent a bad reply."""


class ChatError(MemstackError):
    """A chat-completions backend failed: unreachable, timed out, refused the request or sent a bad reply."""


class EngineError(MemstackError):
    """A storage engine failed."""


class EngineUnavailable(EngineError, ConnectionError):
    """The storage engine cannot be reached (server down, timeout, file locked too long)."""


class EngineFull(EngineUnavailable):
    """The engine refused a write for lack of room (Redis ``maxmemory``, a full disk); nothing was
    applied. Retry later, or free room."""


class NotReplicated(EngineError):
    """A write batch ran on the primary, but fewer replicas than asked (``wait_replicas``)
    acknowledged it in time: it may be lost if the primary fails now."""


class WrongType(EngineError, TypeError):
    """A command was used on a key that holds another type."""


class ScriptExhausted(MemstackError, LookupError):
    """The scripted chat model (a test double) was called more times than its script has replies."""


class CrossSlot(EngineError):
    """One atomic batch touched keys of more than one Redis Cluster hash slot."""


class EngineClosed(EngineError):
    """The engine was used after ``close()``."""
