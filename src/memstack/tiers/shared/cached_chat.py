"""``CachedChat``: a chat call with a semantic cache around it (RubyLLM's ``SemanticCache.wrap``).

``cache.wrap(chat)`` returns an object called like ``chat``: OpenAI-style
``(messages, tools=None, **options)``, as :class:`~memstack.llm.scripted.ScriptedChatModel` or any
OpenAI-compatible client function; a chat object with a ``complete`` method is called through it.
Other attributes are the wrapped chat's.

A call is looked up in the cache when all of these hold, else it goes straight to the chat and
counts neither a hit nor a miss:

* no ``tools`` (answers may depend on tool results) and no ``stream=True``;
* the last message is a user message with text content (no attachments);
* the conversation before it has fewer than ``max_messages`` non-system messages (default 1:
  only the first question of a conversation is cached; None or ``"unlimited"``: no limit).

The cache key is the model (``model=`` option, else the chat's ``model`` attribute), the system
messages and the user message, as RubyLLM builds it, so two models or two system prompts never
share answers. A hit returns the stored response and calls ``on_cache_hit(chat, user_message,
response)``; a miss calls the chat, stores its response (with ``{"model": …}`` as metadata) and
returns it. A response that is not JSON is returned but not stored (logged).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypedDict, Unpack

from ...foundation.errors import InvalidInput, InvalidValue
from ...foundation.limits import short_repr
from ...index.codec import Matrix as Vector
from .cache_settings import MaxMessages, check_max_messages, check_threshold, ttl_ms

__all__ = ["CachedChat", "HitCallback", "WrapOptions", "cache_key"]

HitCallback = Callable[[Any, str, Any], object]


class WrapOptions(TypedDict, total=False):
    """The options of a :class:`CachedChat` (:meth:`~memstack.tiers.shared.cache.SemanticCache.wrap`
    passes them on); absent or None: the cache's own setting (no callback for ``on_cache_hit``):

    * ``threshold``: the least similarity of a hit;
    * ``ttl``: seconds a stored response lives;
    * ``on_cache_hit``: called ``(chat, user_message, response)`` on every hit;
    * ``max_messages``: the most non-system messages before the question for a call to be cached
      (``"unlimited"``: no limit).
    """

    threshold: float | None
    ttl: float | None
    on_cache_hit: HitCallback | None
    max_messages: MaxMessages | None


_log = logging.getLogger(__name__)


class _Cache(Protocol):
    """What a wrapped call needs of its :class:`~memstack.tiers.shared.cache.SemanticCache` (which
    imports this module to offer ``wrap``)."""

    name: str

    @property
    def max_messages(self) -> int | None: ...

    def embed(self, query: str) -> Vector: ...

    def lookup(self, vector: Vector, threshold: float | None = None) -> dict[str, Any] | None: ...

    def count(self, hit: bool) -> None: ...

    def store(  # only what a wrapped call passes: the cache's own store takes more
        self,
        query: str,
        response: Any,
        metadata: dict[str, Any],
        ttl: float | None,
        *,
        vector: Vector,
        miss: bool,
    ) -> str: ...


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return "" if content is None else str(content)


def cache_key(model: object, messages: Sequence[Mapping[str, Any]], user_message: str) -> str:
    """The text embedded for a wrapped call: model, system context and user message."""
    parts = []
    if model:
        parts.append(f"[MODEL:{model}]")
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    if system:
        parts.append(f"[SYSTEM]\n{system}")
    parts.append(f"[USER]\n{user_message}")
    return "\n---\n".join(parts)


class CachedChat:
    """A chat callable wrapped by a :class:`~.cache.SemanticCache` (see the module docstring).

    Raises:
        InvalidConfiguration: a bad threshold, ttl or max_messages.
        InvalidInput: ``chat`` is not callable.
    """

    def __init__(self, cache: _Cache, chat: Any, **options: Unpack[WrapOptions]) -> None:
        unknown = sorted(set(options) - WrapOptions.__optional_keys__)
        if unknown:  # what Python says of an unknown keyword: a typo never passes silently
            raise TypeError(f"wrap() got unexpected keyword arguments: {', '.join(unknown)}")
        call = getattr(chat, "complete", chat)
        if not callable(call):
            raise InvalidInput(f"wrap: chat {short_repr(chat)} is not callable and has no complete method")
        self.cache = cache
        self.chat = chat
        self._call: Callable[..., Any] = call
        threshold, max_messages = options.get("threshold"), options.get("max_messages")
        self.threshold = None if threshold is None else check_threshold(threshold)
        self.ttl = options.get("ttl")
        ttl_ms(self.ttl)  # checked now, used per call
        self.on_cache_hit = options.get("on_cache_hit")
        self._max_messages = max_messages if max_messages is None else check_max_messages(max_messages)
        self._unlimited = max_messages is not None and self._max_messages is None

    @property
    def max_messages(self) -> int | None:
        """The limit in force: this wrapper's, else the cache's (None: no limit)."""
        if self._unlimited:
            return None
        return self._max_messages if self._max_messages is not None else self.cache.max_messages

    def _cacheable(
        self, messages: Sequence[Mapping[str, Any]], tools: object, options: Mapping[str, Any]
    ) -> str | None:
        """The user message when this call may use the cache, else None."""
        if tools or options.get("stream") or not messages:
            return None
        last = messages[-1]
        if (
            not isinstance(last, Mapping)
            or last.get("role") != "user"
            or not isinstance(last.get("content"), str)
        ):
            return None
        limit = self.max_messages
        if limit is not None and sum(1 for m in messages[:-1] if m.get("role") != "system") >= limit:
            return None
        return str(last["content"])

    def __call__(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> Any:
        """The chat's answer to ``messages``: from the cache when a similar call was answered.

        Raises:
            Whatever the wrapped chat raises; InvalidInput/EmbeddingError from the cache's embedder.
        """
        user_message = self._cacheable(messages, tools, options)
        if user_message is None:
            return (
                self._call(messages, tools, **options)
                if tools is not None
                else self._call(messages, **options)
            )
        model = options.get("model") or getattr(self.chat, "model", None)
        key = cache_key(model, messages, user_message)
        vector = self.cache.embed(key)
        hit = self.cache.lookup(vector, self.threshold)
        if hit is not None:
            self.cache.count(True)
            if self.on_cache_hit is not None:
                self.on_cache_hit(self.chat, user_message, hit["response"])
            return hit["response"]
        try:
            response = self._call(messages, **options)
        except BaseException:
            self.cache.count(False)
            raise
        try:
            metadata = {"model": model} if isinstance(model, str) else {}
            self.cache.store(key, response, metadata, self.ttl, vector=vector, miss=True)
        except InvalidValue as exc:
            _log.warning("semantic cache %r: response not stored: %s", self.cache.name, exc)
            self.cache.count(False)
        return response

    complete = __call__

    def __getattr__(self, name: str) -> Any:
        if name in ("chat", "cache"):
            raise AttributeError(name)  # not set yet (copy, pickle): no recursion
        return getattr(self.chat, name)

    def __repr__(self) -> str:
        return f"<CachedChat {self.chat!r} cache={self.cache.name!r}>"
