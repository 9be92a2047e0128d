"""``ScriptedChatModel``: a deterministic fake chat model for tests of agent loops.

It answers each call with the next item of its script, in the OpenAI chat-completions response
shape, and records what it was sent. No network, no randomness: ids count up from 1.

>>> from memstack.llm.scripted import ScriptedChatModel, tool_call
>>> model = ScriptedChatModel([tool_call("search_memory", {"query": "jazz"}), "You like jazz."])
>>> first = model.complete([{"role": "user", "content": "What music do I like?"}])
>>> first["choices"][0]["message"]["tool_calls"][0]["function"]
{'name': 'search_memory', 'arguments': '{"query": "jazz"}'}
>>> model.complete([])["choices"][0]["message"]["content"]
'You like jazz.'

Script items: a string (a text reply), :func:`tool_call` / :func:`reply` results, an OpenAI
assistant message dict, or a callable ``(messages, tools) -> item`` for replies that depend on
what the model was sent.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..foundation.clock import Clock
from ..foundation.errors import InvalidValue, ScriptExhausted
from .tokens import count_messages, estimate_tokens

__all__ = ["Reply", "ScriptExhausted", "ScriptedChatModel", "ToolCall", "reply", "tool_call"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A scripted tool call; ``arguments`` is sent as given when a string (even malformed JSON)."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """A scripted assistant message: text and/or tool calls."""

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


def tool_call(name: str, arguments: Mapping[str, Any] | str | None = None, *, id: str | None = None) -> Reply:  # noqa: A002 - OpenAI's field name
    """A reply made of one tool call."""
    return Reply(None, (ToolCall(name, {} if arguments is None else arguments, id),))


def reply(content: str | None = None, *calls: ToolCall) -> Reply:
    """A reply with optional text and any number of :class:`ToolCall`."""
    return Reply(content, tuple(calls))


ScriptItem = (
    str | Reply | Mapping[str, Any] | Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], Any]
)


class ScriptedChatModel:
    """A fake chat model that plays back a script.

    Args:
        script: the replies, in order (see the module docstring for the item kinds).
        model: the model name reported in responses.
        clock: source of ``created`` (default: 0, fully deterministic).

    Attributes:
        calls: one record per call: ``{"messages", "tools", "options"}``, deep copies.
    """

    def __init__(
        self, script: Iterable[ScriptItem], *, model: str = "scripted", clock: Clock | None = None
    ) -> None:
        self._script = list(script)
        self._position = 0
        self._call_ids = 0
        self.model = model
        self.clock = clock
        self.calls: list[dict[str, Any]] = []

    @property
    def remaining(self) -> int:
        """Replies not yet played."""
        return len(self._script) - self._position

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """The next scripted reply as an OpenAI ``chat.completion`` response dict.

        Raises:
            ScriptExhausted: no reply left.
            InvalidValue: a script item of an unknown kind.
        """
        sent = [copy.deepcopy(dict(m)) for m in messages]
        offered = None if tools is None else [copy.deepcopy(dict(t)) for t in tools]
        self.calls.append({"messages": sent, "tools": offered, "options": copy.deepcopy(options)})
        if self._position >= len(self._script):
            raise ScriptExhausted(
                f"ScriptedChatModel: call {len(self.calls)} but the script has only "
                f"{len(self._script)} replies"
            )
        item = self._script[self._position]
        self._position += 1
        if callable(item):
            item = item(copy.deepcopy(sent), copy.deepcopy(offered))
        message = self._message(item)
        n = len(self.calls)
        completion = estimate_tokens(json.dumps(message, ensure_ascii=False))
        prompt = count_messages(sent, estimate_tokens)
        return {
            "id": f"chatcmpl-scripted-{n}",
            "object": "chat.completion",
            "created": int(self.clock.now()) if self.clock is not None else 0,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    __call__ = complete

    def _message(self, item: Any) -> dict[str, Any]:
        if isinstance(item, str):
            item = Reply(item)
        if isinstance(item, Reply):
            message: dict[str, Any] = {"role": "assistant", "content": item.content}
            if item.tool_calls:
                message["tool_calls"] = [self._call(c) for c in item.tool_calls]
            return message
        if isinstance(item, Mapping):
            message = copy.deepcopy(dict(item))
            message.setdefault("role", "assistant")
            message.setdefault("content", None)
            return message
        raise InvalidValue(f"ScriptedChatModel: script item {item!r} is not a str, Reply, dict or callable")

    def _call(self, call: ToolCall) -> dict[str, Any]:
        self._call_ids += 1
        arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(dict(call.arguments))
        return {
            "id": call.id or f"call_{self._call_ids}",
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
        }
