"""``PersistentMemoryNode``: the RocketRide pipeline filter on the ``questions`` and ``answers`` lanes.

A question carrying ``metadata['session_id']`` is forwarded as a copy enriched with
``metadata['memory_context']`` (every stored key → value); an answer is stored as ``last_answer``
and counted in ``answer_count``. The node never mutates what it is given. Items are plain objects
or dicts with a ``metadata`` dict and text (``get_text()``, ``getText()``, ``text`` or ``str()``).
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Final, TypeVar

from ...foundation.clock import Clock
from ...foundation.errors import (
    EngineUnavailable,
    InvalidConfiguration,
    InvalidInput,
    InvalidValue,
    MemstackError,
    SessionExists,
)
from ...foundation.limits import short_repr
from .store import BACKENDS, PersistentMemoryStore

__all__ = ["PROFILES", "NodeConfig", "PersistentMemoryNode"]

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class NodeConfig:
    """The node's settings (the seed's fields, plus ``url`` and ``strict``)."""

    backend: str = "memory"
    redis_host: str = "localhost"
    redis_port: int = 6379
    redis_password: str | None = None
    session_ttl_hours: float = 0
    max_history: int = 100
    auto_summarize: bool = True
    url: str | None = None
    strict: bool = False
    """Raise :class:`EngineUnavailable` instead of forwarding items unchanged when storage is down."""


PROFILES: Final[dict[str, dict[str, Any]]] = {
    "memory": {"backend": "memory", "session_ttl_hours": 0},
    "redis": {"backend": "redis", "redis_host": "localhost", "redis_port": 6379, "session_ttl_hours": 24},
    "custom": {"backend": "redis", "redis_host": "", "session_ttl_hours": 0},
    "sqlite": {"backend": "sqlite", "session_ttl_hours": 0},
}
"""Named starting points; explicit settings override them."""

_FIELDS: Final = frozenset(f.name for f in fields(NodeConfig))


def build_config(profile: str = "memory", settings: Mapping[str, Any] | None = None) -> NodeConfig:
    """The config of ``profile`` with ``settings`` applied (empty password means none).

    Raises:
        InvalidConfiguration: unknown profile, unknown field or unknown backend.
    """
    if profile not in PROFILES:
        raise InvalidConfiguration(
            f"unknown profile {short_repr(profile)}; expected one of {', '.join(PROFILES)}"
        )
    merged = {**PROFILES[profile], **(settings or {})}
    unknown = sorted(set(merged) - _FIELDS)
    if unknown:
        raise InvalidConfiguration(f"unknown node setting(s) {unknown}; known: {sorted(_FIELDS)}")
    config = replace(NodeConfig(), **merged)
    if config.backend not in BACKENDS:
        raise InvalidConfiguration(
            f"Unknown backend: {short_repr(config.backend)}. "
            'Must be "redis", "sqlite", "postgres" or "memory".'
        )
    if not config.redis_password:
        config = replace(config, redis_password=None)
    return config


class PersistentMemoryNode:
    """The pipeline filter. ``open()`` once per pipe, ``open_item()`` per item, ``close()`` at the end.

    Args:
        config: settings overriding the profile (a mapping of :class:`NodeConfig` fields).
        profile: ``memory`` (default), ``redis``, ``custom`` or ``sqlite``.
        clock: time source for the store (tests).

    Raises:
        InvalidConfiguration: unknown profile, field or backend.
    """

    def __init__(
        self, config: Mapping[str, Any] | None = None, *, profile: str = "memory", clock: Clock | None = None
    ) -> None:
        self.config = build_config(profile, config)
        self.store: PersistentMemoryStore | None = None
        self._clock = clock
        self._current_session_id: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def open(self) -> None:
        """Build the store (once; a second call keeps the first store).

        Raises:
            InvalidConfiguration: e.g. Redis with an empty host (profile ``custom``).
            EngineUnavailable: the engine cannot be reached.
        """
        if self.store is not None:
            return
        c = self.config
        self.store = PersistentMemoryStore(
            c.backend,
            url=c.url,
            max_history=c.max_history,
            auto_summarize=c.auto_summarize,
            redis_host=c.redis_host,
            redis_port=c.redis_port,
            redis_password=c.redis_password,
            session_ttl_hours=c.session_ttl_hours,
            clock=self._clock,
        )

    def close(self) -> None:
        """Close the engine and drop the store, even when closing raises (the error propagates)."""
        store, self.store = self.store, None
        self._current_session_id = None
        if store is not None:
            store.backend.close()

    def open_item(self) -> None:
        """Start a new pipeline item: forget the session id of the previous question."""
        self._current_session_id = None

    def __enter__(self) -> PersistentMemoryNode:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- lanes -------------------------------------------------------------------------------
    def write_questions(self, question: T) -> T:
        """The question, enriched with ``metadata['memory_context']`` when the session has keys.

        Raises:
            EngineUnavailable: only with ``strict=True``; otherwise the item is forwarded as is.
        """
        return self._lane(question, "question", self._question_session, self._enrich)

    def write_answers(self, answer: T) -> T:
        """The answer, after storing ``last_answer`` and incrementing ``answer_count``.

        Raises:
            EngineUnavailable: only with ``strict=True``; otherwise the item is forwarded as is.
        """
        return self._lane(answer, "answer", self._answer_session, self._record_answer)

    def _lane(
        self,
        original: T,
        what: str,
        session: Callable[[Any, dict[str, Any] | None], str | None],
        work: Callable[[PersistentMemoryStore, Any, dict[str, Any], str], None],
    ) -> T:
        """What both lanes do around their ``work``: the item passes as is without a store (or when
        too deep to copy); ``session`` picks the session id from the item's (or None: the copy
        passes); the work's bad input is logged and the copy passes; an unreachable engine gives
        :meth:`_unavailable`."""
        copied = None if self.store is None else _copy(original)
        if copied is None or self.store is None:
            return original
        metadata = _metadata(copied)
        sid = session(metadata.get("session_id") if metadata is not None else None, metadata)
        if not sid:
            return copied
        try:
            work(self.store, copied, {} if metadata is None else metadata, sid)
        except EngineUnavailable as exc:
            return self._unavailable(exc, original)
        except InvalidInput as exc:
            log.debug("PersistentMemoryNode: %s passes unchanged: %s", what, exc)
        return copied

    def _question_session(self, sid: Any, metadata: dict[str, Any] | None) -> str | None:
        self._current_session_id = sid if isinstance(sid, str) else None
        return sid if metadata is not None else None

    def _answer_session(self, sid: Any, metadata: dict[str, Any] | None) -> str | None:
        return sid or self._current_session_id

    def _enrich(self, store: PersistentMemoryStore, item: Any, metadata: dict[str, Any], sid: str) -> None:
        if not self._resume_or_create(sid):
            self._current_session_id = None
            return
        context = store.sessions.items(sid)
        if context:
            metadata["memory_context"] = context

    def _record_answer(
        self, store: PersistentMemoryStore, item: Any, metadata: dict[str, Any], sid: str
    ) -> None:
        if self._resume_or_create(sid):
            store.sessions.put(sid, "last_answer", _text(item))
            store.sessions.increment(sid, "answer_count")

    def _resume_or_create(self, sid: str) -> bool:
        """True when the session is live afterwards; a malformed id is logged and gives False."""
        assert self.store is not None  # callers checked; narrows the type
        sessions = self.store.sessions
        try:
            if sessions.exists(sid):
                return True
            with contextlib.suppress(SessionExists):  # created by a concurrent item: fine
                self.store.sessions._create(sid, self.store.ttl_seconds)
        except InvalidInput as exc:
            log.debug("PersistentMemoryNode: invalid session id, item passes unchanged: %s", exc)
            return False
        except EngineUnavailable:
            raise
        except MemstackError as exc:  # e.g. the session cap: like the seed, the item goes on without
            log.warning("PersistentMemoryNode: cannot create session %r: %s", sid, exc)
            return False
        return True

    def _unavailable(self, exc: EngineUnavailable, original: T) -> T:
        if self.config.strict:
            raise exc
        log.warning("PersistentMemoryNode: storage unavailable, item forwarded unchanged: %s", exc)
        return copy.deepcopy(original)


def _metadata(item: Any) -> dict[str, Any] | None:
    metadata = item.get("metadata") if isinstance(item, dict) else getattr(item, "metadata", None)
    return metadata if isinstance(metadata, dict) else None


def _copy(item: T) -> T | None:
    """A deep copy of ``item``, or None (logged) when it is nested too deep to copy: such an item
    is forwarded as is, like any other item the node cannot use."""
    try:
        return copy.deepcopy(item)
    except RecursionError:
        log.debug("PersistentMemoryNode: item nested too deep to copy, passes unchanged")
        return None


def _text(item: Any) -> str:
    """The answer's text, as the seed takes it.

    Raises:
        InvalidValue: the text cannot be made a string (an int past Python's digit limit, a value
            nested too deep to print).
    """
    try:
        return _raw_text(item)
    except (ValueError, RecursionError):
        raise InvalidValue("last_answer: the answer's text cannot be turned into a string") from None


def _raw_text(item: Any) -> str:
    for name in ("get_text", "getText"):
        method = getattr(item, name, None)
        if callable(method):
            return str(method())
    if isinstance(item, dict):
        text = item.get("text")
        return str(item) if text is None else str(text)
    text = getattr(item, "text", None)
    return str(item) if text is None else str(text)
