"""``ChatClient``: any OpenAI-compatible ``/v1/chat/completions`` endpoint, over ``urllib`` only.

No vendor SDK. Only the configured endpoint is contacted; the key is read from an environment
variable (never stored in settings files). Retries, backoff and error mapping are the ones of the
embeddings client (:mod:`memstack.llm._http`). ``complete`` returns the server's response dict, the
same shape :class:`~memstack.llm.scripted.ScriptedChatModel` returns, so either can drive a dream pass.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from ..foundation.errors import ChatError, InvalidConfiguration
from ..foundation.redact import redact_url
from ._http import DEFAULT_DEADLINE, MAX_REPLY_BYTES, check_client, post_json

_N = TypeVar("_N", int, float)

__all__ = ["ChatClient", "ChatModel", "chat_model_from_env", "message_text"]

DEFAULT_KEY_ENV = "MEMSTACK_CHAT_API_KEY"


@runtime_checkable
class ChatModel(Protocol):
    """What the dream passes need from a chat model (ChatClient and ScriptedChatModel both are)."""

    model: str

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> dict[str, Any]: ...


class ChatClient:
    """Chat completions from ``POST {base_url}/chat/completions``.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:11434/v1``.
        model: the model name sent with every request (also :attr:`model`).
        api_key_env: the environment variable holding the bearer key (unset or empty: no key).
        timeout: seconds per wait for the server (connect, each read).
        deadline: seconds for a whole completion, every attempt and backoff included (a server
            trickling its reply is cut here). Default 180; ``$MEMSTACK_CHAT_DEADLINE``.
        max_reply_bytes: largest reply read (a larger one is refused as it streams in, never
            held). Default 32 MiB; ``$MEMSTACK_CHAT_MAX_REPLY_BYTES``.
        retries: retries after a failed attempt (connection error, timeout, 429, 5xx).
        backoff: first retry delay in seconds, doubled each retry.
        json_mode: ask for ``response_format: {"type": "json_object"}`` (servers that offer it).
        temperature: sent when not None.

    Raises:
        InvalidConfiguration: a bad URL, model, timeout, deadline, reply cap, retries or backoff.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = DEFAULT_KEY_ENV,
        timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 0.5,
        json_mode: bool = False,
        temperature: float | None = 0.0,
        deadline: float = DEFAULT_DEADLINE,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        check_client(base_url, model, timeout, retries, backoff)
        if not 0 < deadline <= 86_400:
            raise InvalidConfiguration(f"deadline={deadline!r} must be seconds in (0, 86400]")
        cap = max_reply_bytes
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1024:
            raise InvalidConfiguration(f"max_reply_bytes={max_reply_bytes!r} must be an int >= 1024")
        self.deadline, self.max_reply_bytes = float(deadline), max_reply_bytes
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.timeout, self.retries, self.backoff = float(timeout), retries, float(backoff)
        self.json_mode, self.temperature = json_mode, temperature

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """One chat completion: the server's response as a dict with at least one choice.

        ``options`` are added to the request body (``max_tokens``, ``response_format``...).

        Raises:
            ChatError: unreachable after the retries, timed out, refused, or a reply without a
                ``choices[0].message``.
        """
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        if tools:
            body["tools"] = [dict(t) for t in tools]
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        body.update(options)
        reply = post_json(
            self.url,
            json.dumps(body, ensure_ascii=False).encode(),
            api_key=os.environ.get(self.api_key_env) or None,
            timeout=self.timeout,
            retries=self.retries,
            backoff=self.backoff,
            error=ChatError,
            what="chat request",
            deadline=self.deadline,
            max_reply=self.max_reply_bytes,
        )
        message_text(reply, redact_url(self.url))  # shape check now, so callers get one error type
        if not isinstance(reply, dict):  # pragma: no cover - message_text raised already
            raise ChatError(f"{redact_url(self.url)} sent a reply that is not an object")
        return reply

    __call__ = complete

    def __repr__(self) -> str:
        return f"<ChatClient {self.model!r} at {redact_url(self.url)!r}>"


def message_text(reply: object, source: str = "chat model") -> str:
    """The text of ``choices[0].message.content`` of a completion reply ("" when null).

    Raises:
        ChatError: the reply has no such message, or content that is not text.
    """
    choices = reply.get("choices") if isinstance(reply, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise ChatError(f"{source} sent a reply without choices[0].message: {str(reply)[:120]!r}")
    content = message.get("content")
    if content is None:
        return ""
    if not isinstance(content, str):
        raise ChatError(f"{source} sent message content that is not text: {str(content)[:120]!r}")
    return content


def chat_model_from_env(environ: Mapping[str, str] | None = None) -> ChatClient | None:
    """The chat model configured by ``MEMSTACK_CHAT_URL`` + ``MEMSTACK_CHAT_MODEL`` (None when
    unset); ``MEMSTACK_CHAT_JSON=1`` asks for JSON replies; the key is ``MEMSTACK_CHAT_API_KEY``.

    Raises:
        InvalidConfiguration: one of URL and model without the other, or a bad URL.
    """
    env = os.environ if environ is None else environ
    url, model = env.get("MEMSTACK_CHAT_URL") or None, env.get("MEMSTACK_CHAT_MODEL") or None
    if url is None and model is None:
        return None
    if url is None or model is None:
        raise InvalidConfiguration("MEMSTACK_CHAT_URL and MEMSTACK_CHAT_MODEL must be set together")
    return ChatClient(
        url,
        model,
        json_mode=env.get("MEMSTACK_CHAT_JSON", "") in ("1", "true", "yes"),
        deadline=_number(env, "MEMSTACK_CHAT_DEADLINE", DEFAULT_DEADLINE, float),
        max_reply_bytes=_number(env, "MEMSTACK_CHAT_MAX_REPLY_BYTES", MAX_REPLY_BYTES, int),
    )


def _number(env: Mapping[str, str], name: str, default: _N, kind: Callable[[str], _N]) -> _N:
    raw = env.get(name)
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise InvalidConfiguration(f"{name}={raw!r} is not a number") from None
