"""``ConversationStore``: messages with branches and the token-limited history of the active thread.

Key layout, from the keyspace registry (families ``conversation.count``, ``.log``, ``.message``;
tier prefix ``conv:``; ``{t}`` = ``engine.tag(conversation_id)``, one cluster slot per conversation)::

    conv:{t}:n                 string  number of messages appended so far (next position)
    conv:{t}:log               list    message records (JSON), in creation order
    conv:{t}:id:{message_id}   string  the position of that message in the log

Appending is one guarded batch, O(1) whatever the conversation's length: the store remembers each
conversation's tail (count, newest id) after its own appends, so only a first append, or one after
another writer moved the tail (a guard fails), reads the tail first.
Reading a history reads the log backwards from the current message a page at a time and stops as
soon as the thread is complete, the token budget is certainly spent, or ``message_limit``
messages were read: its cost follows the window, not the conversation.

``message_limit`` and the in-flight rule: see :mod:`memstack.tiers.conversation.history`.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Unpack

from ...engines.base import Engine
from ...foundation.errors import AlreadyExists, Conflict, EntryNotFound
from ...foundation.keyspace import family_named, family_of, register
from ...foundation.keyspace.families import CONVERSATION
from ...llm.tokens import TokenCounter, token_counter
from .activity import note_activity
from .budget import TokenBudget
from .history import DEFAULT_MESSAGE_LIMIT, drop_in_flight, effective_limit, select_history, select_thread
from .inputs import check_positions
from .message import (
    LATEST,
    Message,
    check_conversation_id,
    check_message_id,
    check_token_count,
    link_drafts,
)
from .prompt import FileResolver, PromptMessage, default_resolver, history_text
from .requests import AppendMessages, MessageOptions, ReadHistory
from .twins import Face, Twin

__all__ = [
    "DEFAULT_MESSAGE_LIMIT",
    "LATEST",
    "PAGE",
    "AsyncConversationStore",
    "ConversationStore",
    "drop_in_flight",
    "effective_limit",
]

PREFIX: Final = CONVERSATION.lead
_COUNT, _LOG = family_named("conversation.count").tail, family_named("conversation.log").tail
_MESSAGE: Final = family_named("conversation.message").tail_prefix
PAGE: Final = 100
"""Messages read per round trip when walking a history backwards."""
_RETRIES: Final = 20
_TAILS: Final = 1024


class ConversationStore:
    """Conversations on one engine.

    Args:
        engine: the storage engine.
        counter: counts the tokens of a message's content when it is appended (an encoding
            name, a model name or a callable; default ``o200k_base``).
    """

    def __init__(self, engine: Engine, *, counter: str | TokenCounter | None = None) -> None:
        self.engine = engine
        self.count_tokens: TokenCounter = token_counter(counter)
        # Last known (count, newest id) per conversation: a writer that appends again needs no
        # read first; the batch's guards catch a stale entry and the append is retried.
        self._tails: dict[str, tuple[str | None, str | None]] = {}
        self._tails_lock = threading.Lock()

    @property
    def aio(self) -> AsyncConversationStore:
        """The async face: the same methods as coroutines (:mod:`memstack.tiers.conversation.aio`)."""
        return AsyncConversationStore(self)

    # -- keys --------------------------------------------------------------------------------
    def _base(self, conversation_id: str) -> str:
        return CONVERSATION.render(self.engine.tag, conversation=check_conversation_id(conversation_id))

    # -- writing -----------------------------------------------------------------------------
    def append(
        self, conversation_id: str, role: str, content: str, **options: Unpack[MessageOptions]
    ) -> Message:
        """Append one message and return it (builds an :class:`~.requests.AppendMessages`).

        Args:
            message_id: unique in the conversation (default: a new UUID).
            parent_message_id: the message it follows; by default the newest message of the
                conversation (None for the first one). None starts a new thread; ``UUID_NIL``
                marks a legacy message. A regenerated answer names the question it answers again.
            token_count: tokens of ``content`` (default: counted with the store's counter).
            subject: the end user the conversation is about (:mod:`memstack.foundation.keyspace.subjects`).

        Raises:
            InvalidSessionId, InvalidKey, InvalidValue: a malformed id, role, content or file.
            AlreadyExists: ``message_id`` is already in the conversation.
            EntryNotFound: ``parent_message_id`` is not in the conversation.
            Conflict: other writers kept appending concurrently (after retries).
        """
        return self.add(AppendMessages.one(conversation_id, role, content, **options))[0]

    def extend(
        self, conversation_id: str, messages: Sequence[Mapping[str, Any]], *, subject: str | None = None
    ) -> list[Message]:
        """Append several messages in one atomic batch (fields as :meth:`append`'s arguments).

        A parent may be an earlier message of the same call; the default parent is the message
        before it. Nothing is written if any message is invalid.

        Raises:
            The errors of :meth:`append`.
        """
        return self.add(AppendMessages.of(conversation_id, messages, subject=subject))

    def add(self, request: AppendMessages) -> list[Message]:
        """Append a checked request's messages in one atomic batch and return them as stored.

        Raises:
            AlreadyExists, EntryNotFound, Conflict: as :meth:`append`.
        """
        conversation_id, subject = request.conversation_id, request.subject
        base = self._base(conversation_id)
        drafts = [self._counted(d) for d in request.drafts]
        ids = [d["message_id"] for d in drafts]
        for attempt in range(_RETRIES):
            if attempt:
                # Lost a race: back off a random, growing while, so contending writers stop
                # retrying in lockstep (test_store.py::test_concurrent_appends_lose_nothing).
                time.sleep(random.uniform(0, min(0.05, 0.0005 * 2**attempt)))
            count_text, previous = self._tail(base)
            count = int(count_text) if count_text is not None else 0
            built, external = link_drafts(drafts, previous, self.engine.clock.now())
            batch = self.engine.batch()
            batch.require_equal(base + _COUNT, count_text)
            if previous is not None:
                batch.require_exists(base + _MESSAGE + previous)  # the cached tail may be stale
            for message_id in ids:
                batch.require_missing(base + _MESSAGE + message_id)
            for parent in sorted(external):
                batch.require_exists(base + _MESSAGE + parent)
            batch.set(base + _COUNT, str(count + len(built)))
            register(self.engine, batch, subject, "conversation", conversation_id)
            note_activity(self.engine, batch, subject, conversation_id, max(m.created_at for m in built))
            batch.rpush(base + _LOG, *(m.to_json() for m in built))
            for offset, message_id in enumerate(ids):
                batch.set(base + _MESSAGE + message_id, str(count + offset))
            if batch.execute().applied:
                self._remember(base, (str(count + len(built)), built[-1].message_id))
                return built
            self._tails.pop(base, None)
            self._diagnose(base, ids, sorted(external))
        raise Conflict(
            f"conversation {conversation_id!r}: gave up appending after {_RETRIES} concurrent writes"
        )

    def _counted(self, draft: Mapping[str, Any]) -> dict[str, Any]:
        """A draft with its token count: the given one, or the store's counter's."""
        if draft["token_count"] is not None:
            return dict(draft)
        return {**draft, "token_count": check_token_count(self.count_tokens(draft["content"]))}

    def _tail(self, base: str) -> tuple[str | None, str | None]:
        """The conversation's message count (as stored) and last message id, cached or read."""
        tail = self._tails.get(base)
        if tail is not None:
            return tail
        with self.engine.batch() as read:
            read.get(base + _COUNT)
            read.lindex(base + _LOG, -1)
        assert read.result is not None
        count_text, last = read.result.results
        return count_text, Message.from_json(last).message_id if last is not None else None

    def _remember(self, base: str, tail: tuple[str | None, str | None]) -> None:
        with self._tails_lock:
            self._tails.pop(base, None)
            self._tails[base] = tail
            while len(self._tails) > _TAILS:
                self._tails.pop(next(iter(self._tails)))

    def _diagnose(self, base: str, ids: Sequence[str], parents: Sequence[str]) -> None:
        with self.engine.batch() as check:
            for message_id in ids:
                check.exists(base + _MESSAGE + message_id)
            for parent in parents:
                check.exists(base + _MESSAGE + parent)
        assert check.result is not None
        found = check.result.results
        for message_id, exists in zip(ids, found[: len(ids)], strict=True):
            if exists:
                raise AlreadyExists(f"message_id {message_id!r}: already in this conversation")
        for parent, exists in zip(parents, found[len(ids) :], strict=True):
            if not exists:
                raise EntryNotFound(f"parent_message_id {parent!r}: no such message in this conversation")

    def delete(self, conversation_id: str) -> bool:
        """Delete a conversation and all its messages; True if it existed."""
        base = self._base(conversation_id)
        self._tails.pop(base, None)
        keys = list(self.engine.scan(base + _MESSAGE))
        existed = self.engine.exists(base + _COUNT)
        for start in range(0, len(keys), 1000):
            self.engine.delete(*keys[start : start + 1000])
        self.engine.delete(base + _LOG, base + _COUNT)
        return existed

    # -- reading -----------------------------------------------------------------------------
    def count(self, conversation_id: str) -> int:
        """Number of messages in the conversation (every branch)."""
        value = self.engine.get(self._base(conversation_id) + _COUNT)
        return int(value) if value is not None else 0

    def conversations(self) -> list[str]:
        """Ids of the stored conversations, sorted."""
        ids = set()
        for key in self.engine.scan(PREFIX):
            _, found = family_of(key)
            if found is not None and found[0].name == "conversation.count":
                ids.add(found[1]["conversation"])
        return sorted(ids)

    def get(self, conversation_id: str, message_id: str) -> Message:
        """One message.

        Raises:
            EntryNotFound: no such message in the conversation.
        """
        base = self._base(conversation_id)
        position = self._position(base, message_id)
        record = self.engine.lindex(base + _LOG, position)
        if record is None:
            raise EntryNotFound(f"message_id {message_id!r}: no such message in this conversation")
        return Message.from_json(record)

    def messages(self, conversation_id: str, start: int = 0, stop: int = -1) -> list[Message]:
        """Messages by position in creation order (``start..stop`` inclusive, negative from the end).

        Raises:
            InvalidValue: ``start`` or ``stop`` is not an int of magnitude at most 2**53.
        """
        check_positions(start, stop)
        base = self._base(conversation_id)
        return [Message.from_json(r) for r in self.engine.lrange(base + _LOG, start, stop)]

    def _position(self, base: str, message_id: str) -> int:
        position = self.engine.get(base + _MESSAGE + check_message_id(message_id))
        if position is None:
            raise EntryNotFound(f"message_id {message_id!r}: no such message in this conversation")
        return int(position)

    def _pages(self, base: str, current_message_id: str | None) -> Iterator[list[Message]]:
        """Pages of messages, newest first, ending at the current message and going back."""
        if current_message_id is None:
            with self.engine.batch() as first:
                first.get(base + _COUNT)
                first.lrange(base + _LOG, -PAGE, -1)
            assert first.result is not None
            count_text, records = first.result.results
            end = int(count_text) if count_text is not None else 0
        else:
            end = self._position(base, current_message_id) + 1
            records = self.engine.lrange(base + _LOG, max(0, end - PAGE), end - 1)
        while True:
            yield [Message.from_json(r) for r in reversed(records)]
            end -= len(records)
            if end <= 0 or not records:
                return
            records = self.engine.lrange(base + _LOG, max(0, end - PAGE), end - 1)

    def thread(
        self, conversation_id: str, current_message_id: str | None = None, *, message_limit: int | None = None
    ) -> list[Message]:
        """The active thread ending at ``current_message_id`` (default: the newest), oldest first.

        ``message_limit``: read at most this many stored messages (None: no limit).

        Raises:
            EntryNotFound: ``current_message_id`` is not in the conversation.
        """
        return select_thread(self._pages(self._base(conversation_id), current_message_id), message_limit)

    def thread_length(self, conversation_id: str, current_message_id: str | None = None) -> int:
        """Messages on the active thread (no limit), the in-flight request not counted
        (Dify's ``get_thread_messages_length``, in messages rather than rows).

        Raises:
            EntryNotFound: ``current_message_id`` is not in the conversation.
        """
        return len(drop_in_flight(self.thread(conversation_id, current_message_id)[::-1]))

    def history(
        self,
        conversation_id: str,
        current_message_id: str | None = None,
        max_token_limit: int | None = None,
        message_limit: int | None = None,
        *,
        token_budget: TokenBudget | Mapping[str, Any] | int | None = None,
        resolver: FileResolver = default_resolver,
        image_detail: str = "high",
    ) -> list[PromptMessage]:
        """The active thread as OpenAI chat messages, oldest first, within ``max_token_limit``.

        The token limit is ``max_token_limit`` (default 2000), or the tokens ``token_budget``
        leaves for the history: ``context_size - max_output_tokens - prompt_tokens`` floored at
        0, as Dify computes it (:func:`~memstack.tiers.conversation.budget.history_token_budget`).

        Reads at most ``effective_limit(message_limit)`` stored messages back from the current
        one, extracts the thread, drops the in-flight request, builds the prompt messages
        (files first, then text) and prunes the oldest whole turns to the token limit (see
        :mod:`memstack.tiers.conversation.prune`). Message tokens are their stored ``token_count`` plus
        the per-message overhead and a fixed cost per image.

        Raises:
            EntryNotFound: ``current_message_id`` is not in the conversation.
            InvalidValue: ``image_detail`` is not high, low or auto.
            InvalidInput: both ``max_token_limit`` and ``token_budget``, or a negative count.
        """
        request = ReadHistory.of(
            conversation_id,
            current_message_id=current_message_id,
            max_token_limit=max_token_limit,
            message_limit=message_limit,
            token_budget=token_budget,
            image_detail=image_detail,
        )
        return self.read_history(request, resolver=resolver)

    def read_history(
        self, request: ReadHistory, *, resolver: FileResolver = default_resolver
    ) -> list[PromptMessage]:
        """:meth:`history` of a checked request.

        Raises:
            EntryNotFound: the request's current message is not in the conversation.
        """
        return select_history(
            self._pages(self._base(request.conversation_id), request.current_message_id),
            max_token_limit=request.max_token_limit,
            message_limit=request.message_limit,
            resolver=resolver,
            image_detail=request.image_detail,
        )

    def history_text(
        self,
        conversation_id: str,
        current_message_id: str | None = None,
        human_prefix: str = "Human",
        ai_prefix: str = "Assistant",
        max_token_limit: int | None = None,
        message_limit: int | None = None,
        *,
        token_budget: TokenBudget | Mapping[str, Any] | int | None = None,
    ) -> str:
        """:meth:`history` rendered as ``"Human: …\\nAssistant: …"`` lines (Dify's text form).

        Raises:
            EntryNotFound: ``current_message_id`` is not in the conversation.
            InvalidInput: both ``max_token_limit`` and ``token_budget``, or a negative count.
        """
        messages = self.history(
            conversation_id, current_message_id, max_token_limit, message_limit, token_budget=token_budget
        )
        return history_text(messages, human_prefix, ai_prefix)


class AsyncConversationStore(Face[ConversationStore]):
    """:class:`ConversationStore` for asyncio code (:mod:`memstack.tiers.conversation.aio`)."""

    append = Twin(ConversationStore.append)
    extend = Twin(ConversationStore.extend)
    add = Twin(ConversationStore.add)
    delete = Twin(ConversationStore.delete)
    count = Twin(ConversationStore.count)
    conversations = Twin(ConversationStore.conversations)
    get = Twin(ConversationStore.get)
    messages = Twin(ConversationStore.messages)
    thread = Twin(ConversationStore.thread)
    thread_length = Twin(ConversationStore.thread_length)
    history = Twin(ConversationStore.history)
    read_history = Twin(ConversationStore.read_history)
    history_text = Twin(ConversationStore.history_text)
