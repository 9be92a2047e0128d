"""History selection over pages of stored messages: pure logic, the pages come from any reader.

``message_limit`` counts STORED MESSAGES (one role each), read newest first from the current
message, including those of other branches — like Dify's rows it is applied before thread
extraction and before the in-flight message is dropped. A Dify window of N rows (Q/A pairs)
corresponds to ``message_limit=2N``. None, 0 or a negative number mean 500; more is capped at 500.

The in-flight message (spec 3 item 7.4): when the thread's newest message is an assistant
placeholder (empty content and ``token_count == 0``) it is dropped, and then so is a newest user
message: the question of the current request, which the caller sends as its own prompt.

Pages are consumed lazily, newest first; the selection stops pulling pages as soon as the thread
is complete, ``message_limit`` messages were seen, or the token budget is certainly spent (see
:func:`~memstack.tiers.conversation.prune.older_is_pruned`), so a reader's cost follows the window.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from ...foundation import limits
from ...llm.tokens import IMAGE_TOKENS, MESSAGE_OVERHEAD
from .message import Message
from .prompt import FileResolver, PromptMessage, default_resolver, prompt_message
from .prune import older_is_pruned, prune
from .thread import ThreadWalk

__all__ = [
    "DEFAULT_MESSAGE_LIMIT",
    "check_limits",
    "drop_in_flight",
    "effective_limit",
    "select_history",
    "select_thread",
]

DEFAULT_MESSAGE_LIMIT: Final = 500


def check_limits(message_limit: object, max_token_limit: object = 0) -> None:
    """Check the limits a history read takes, before any read.

    Raises:
        InvalidValue: ``message_limit`` not None nor an int, or ``max_token_limit`` not an int, of
            magnitude at most 2**53 (the message names the field).
    """
    if message_limit is not None:
        limits.check_int(message_limit, "message_limit", minimum=-limits.MAX_COUNT)
    limits.check_int(max_token_limit, "max_token_limit", minimum=-limits.MAX_COUNT)


def effective_limit(message_limit: int | None) -> int:
    """Dify's rule: a positive ``message_limit`` capped at 500, anything else 500."""
    if message_limit and message_limit > 0:
        return min(message_limit, DEFAULT_MESSAGE_LIMIT)
    return DEFAULT_MESSAGE_LIMIT


def drop_in_flight(thread_newest_first: list[Message]) -> list[Message]:
    """The thread (newest first) without the in-flight request (see the module docstring)."""
    thread = thread_newest_first
    if thread and thread[0].role == "assistant" and thread[0].content == "" and thread[0].token_count == 0:
        thread = thread[1:]
    if thread and thread[0].role == "user":
        thread = thread[1:]
    return thread


def select_thread(pages: Iterable[Sequence[Message]], message_limit: int | None = None) -> list[Message]:
    """The active thread, oldest first, reading at most ``message_limit`` messages (None: all).

    Raises:
        InvalidValue: a ``message_limit`` that is not None nor an int (see :func:`check_limits`).
    """
    check_limits(message_limit)
    walk: ThreadWalk[Message] = ThreadWalk()
    budget = message_limit if message_limit is not None and message_limit > 0 else None
    for page in pages:
        if budget is not None:
            page = page[:budget]
            budget -= len(page)
        if walk.feed(page) or budget == 0:
            break
    return walk.thread[::-1]


def select_history(
    pages: Iterable[Sequence[Message]],
    *,
    max_token_limit: int = 2000,
    message_limit: int | None = None,
    resolver: FileResolver = default_resolver,
    image_detail: str = "high",
) -> list[PromptMessage]:
    """The history as OpenAI chat messages, oldest first: thread, in-flight dropped, whole-turn pruning.

    A message costs its stored ``token_count`` plus :data:`~memstack.llm.tokens.MESSAGE_OVERHEAD`
    plus :data:`~memstack.llm.tokens.IMAGE_TOKENS` per image part.

    Raises:
        InvalidValue: a limit that is not an int (see :func:`check_limits`).
    """
    check_limits(message_limit, max_token_limit)
    budget = effective_limit(message_limit)
    walk: ThreadWalk[Message] = ThreadWalk()
    built: dict[str, tuple[PromptMessage, int]] = {}

    def build(message: Message) -> tuple[PromptMessage, int]:
        if message.message_id not in built:
            prompt = prompt_message(
                message.role, message.content, message.files, resolver=resolver, image_detail=image_detail
            )
            parts = prompt["content"] if isinstance(prompt["content"], list) else []
            images = sum(1 for part in parts if part.get("type") == "image_url")
            built[message.message_id] = (
                prompt,
                MESSAGE_OVERHEAD + message.token_count + IMAGE_TOKENS * images,
            )
        return built[message.message_id]

    for page in pages:
        page = page[:budget]
        budget -= len(page)
        if walk.feed(page) or budget <= 0:
            break
        thread = drop_in_flight(walk.thread)
        if older_is_pruned([m.role for m in thread], [build(m)[1] for m in thread], max_token_limit):
            break
    thread = drop_in_flight(walk.thread)[::-1]
    prompts = [build(m) for m in thread]
    kept = prune(prompts, [m.role for m in thread], [t for _, t in prompts], max_token_limit)
    return [prompt for prompt, _ in kept]
