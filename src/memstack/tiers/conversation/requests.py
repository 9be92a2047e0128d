"""The conversation tier's requests: one typed object per append and history read, owned by the
tier and checked once.

Each field's rule lives here and only here: :data:`RULES` gives what a door shows of it (its
description and JSON-schema bounds), the ``of`` constructors run the tier's checks
(:func:`~memstack.tiers.conversation.message.check_conversation_id`, ``check_role``,
``check_message_id``, the token limits of :mod:`.budget`...). ``ConversationStore.append``,
``extend`` and ``history`` and the operations' handlers all build a request with ``of``, so a bad
value gets the same error class and message on every door.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypedDict, Unpack

from ...foundation.errors import AlreadyExists, InvalidValue
from ...foundation.keyspace import check_subject
from ...foundation.limits import MAX_VALUE_BYTES, short_repr
from ...foundation.rules import Rule
from .budget import TokenBudget, resolve_token_limit
from .history import check_limits
from .inputs import MAX_ID_BYTES
from .message import LATEST, ROLES, FileRef, check_conversation_id, check_message_id, draft_message
from .prompt import IMAGE_DETAILS

__all__ = ["RULES", "AppendMessages", "HistoryOptions", "MessageOptions", "ReadHistory", "Rule"]

_COUNT: Final = {"minimum": 0}
RULES: Final[Mapping[str, Rule]] = {
    "conversation_id": Rule("A conversation id.", {"maxLength": 128}),
    "role": Rule(f"{', '.join(ROLES[:-1])} or {ROLES[-1]}"),
    "content": Rule(f"The message text (at most {MAX_VALUE_BYTES // 2**20} MiB)."),
    "message_id": Rule("Its id (default: a new UUID).", {"maxLength": 128}),
    "parent_message_id": Rule(
        "The message it follows: absent follows the newest, null starts a new thread.", {"maxLength": 128}
    ),
    "files": Rule("File references of the message."),
    "workflow_run_id": Rule(
        f"The workflow run of the message (at most {MAX_ID_BYTES} bytes).", {"minLength": 1}
    ),
    "subject": Rule("The end user this is about (for forget).", {"maxLength": 256}),
    "current_message_id": Rule("The current message (default: the newest).", {"maxLength": 128}),
    "max_token_limit": Rule("Token limit (default 2000).", _COUNT),
    "message_limit": Rule("Stored messages read back (at most 500)."),
    "context_size": Rule("Instead of a limit: the model's context window (Dify's budget).", _COUNT),
    "max_output_tokens": Rule("Tokens kept for the answer.", _COUNT),
    "prompt_tokens": Rule("Tokens of the current prompt.", _COUNT),
}
"""Field name -> its rule as the doors show it."""


class MessageOptions(TypedDict, total=False):
    """One appended message's optional fields, as ``ConversationStore.append`` takes them."""

    message_id: str | None
    parent_message_id: str | None
    files: Sequence[FileRef | Mapping[str, Any]] | None
    token_count: int | None
    workflow_run_id: str | None
    subject: str | None


class HistoryOptions(TypedDict, total=False):
    """A history read's fields, as ``ConversationStore.history`` takes them."""

    current_message_id: str | None
    max_token_limit: int | None
    message_limit: int | None
    token_budget: TokenBudget | Mapping[str, Any] | int | None
    image_detail: str


@dataclass(frozen=True, slots=True)
class AppendMessages:
    """A checked append of one or more messages: each draft's id is chosen, a ``token_count``
    of None is counted by the store that writes it (its counter)."""

    conversation_id: str
    drafts: tuple[Mapping[str, Any], ...]
    subject: str | None = None

    @classmethod
    def of(
        cls, conversation_id: str, messages: Sequence[Mapping[str, Any]], *, subject: str | None = None
    ) -> AppendMessages:
        """Messages to append in one atomic batch (fields as :meth:`one`'s), checked.

        Raises:
            InvalidSessionId: a malformed conversation id.
            InvalidKey, InvalidValue: a malformed message id, role, content, file or subject
                (the message names the field).
            AlreadyExists: a message id given twice.
        """
        conversation_id = check_conversation_id(conversation_id)
        if subject is not None:
            check_subject(subject)
        drafts = tuple(draft_message(m) for m in messages)
        ids = [d["message_id"] for d in drafts]
        if len(set(ids)) != len(ids):
            raise AlreadyExists(f"message ids repeat within one extend call: {ids!r}")
        return cls(conversation_id, drafts, subject)

    @classmethod
    def one(
        cls, conversation_id: str, role: str, content: str, **options: Unpack[MessageOptions]
    ) -> AppendMessages:
        """One message to append (``parent_message_id`` absent: after the newest; None: a new
        thread).

        Raises:
            The errors of :meth:`of`.
        """
        fields: dict[str, Any] = {"parent_message_id": LATEST, **options, "role": role, "content": content}
        subject = fields.pop("subject", None)
        return cls.of(conversation_id, [fields], subject=subject)


@dataclass(frozen=True, slots=True)
class ReadHistory:
    """A checked history read: ``max_token_limit`` resolved (the explicit limit, the budget's
    tokens, or 2000)."""

    conversation_id: str
    current_message_id: str | None = None
    max_token_limit: int = 2000
    message_limit: int | None = None
    image_detail: str = "high"

    @classmethod
    def of(cls, conversation_id: str, **options: Unpack[HistoryOptions]) -> ReadHistory:
        """The read, its fields checked.

        Raises:
            InvalidValue: both ``max_token_limit`` and ``token_budget``, or a negative count.
            InvalidValue: ``image_detail`` is not high, low or auto; a limit that is not an int.
            InvalidSessionId, InvalidKey: a malformed conversation or message id.
        """
        limit = resolve_token_limit(options.get("max_token_limit"), options.get("token_budget"))
        image_detail = options.get("image_detail", "high")
        if image_detail not in IMAGE_DETAILS:
            raise InvalidValue(
                f"image_detail {short_repr(image_detail)}: must be one of {', '.join(IMAGE_DETAILS)}"
            )
        conversation_id = check_conversation_id(conversation_id)
        message_limit = options.get("message_limit")
        check_limits(message_limit, limit)
        current = options.get("current_message_id")
        if current is not None:
            check_message_id(current)
        return cls(conversation_id, current, limit, message_limit, image_detail)
