"""``NodeMemory``: the memory of one workflow node inside one conversation (Dify, seed ``002``).

Design A of spec 3 item 16, kept in the engine instead of object storage: per node, one turn per
workflow run ``{user_content, user_files, assistant_content, assistant_files}``, stored as one
hash field per run id under ``conv:{t}:node:{app_id}:{node_id}`` — the conversation's hash tag,
so a node's memory lives in its conversation's cluster slot and dies with it in :meth:`clear`.

Writes are buffered: :meth:`NodeMemory.add_messages` upserts a turn in memory and
:meth:`NodeMemory.flush` writes every pending turn in one batch (all or nothing). The history
follows the conversation's active thread: the workflow run ids of the thread's messages in order
(in-flight request dropped), each run's stored turn as a user and an assistant message (runs
without a turn are skipped), pruned to the token limit by whole turns. ``message_limit`` is
ignored in node mode, as in Dify.

``mode="conversation"`` delegates the history to :meth:`ConversationStore.history`; writes are
then no-ops (the application stores conversation messages itself).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...foundation.errors import InvalidConfiguration, InvalidKey, InvalidValue
from ...foundation.keyspace import family_named
from ...foundation.limits import check_match, short_repr
from ...llm.tokens import TokenCounter, count_message, token_counter
from ...tiers.conversation.budget import TokenBudget, resolve_token_limit
from ...tiers.conversation.history import DEFAULT_MESSAGE_LIMIT, check_limits, drop_in_flight
from ...tiers.conversation.inputs import check_node_turn
from ...tiers.conversation.message import FileRef, check_conversation_id, check_files
from ...tiers.conversation.prompt import PromptMessage, history_text, prompt_message
from ...tiers.conversation.prune import prune
from ...tiers.conversation.store import ConversationStore
from ...tiers.conversation.twins import Face, Twin

__all__ = ["MODES", "AsyncNodeMemory", "NodeMemory"]

MODES: Final = ("node", "conversation")
_NODE: Final = family_named("conversation.node")
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_log = logging.getLogger(__name__)

Files = Sequence[FileRef | Mapping[str, Any]] | None


def _check_name(value: object, name: str) -> str:
    return check_match(value, _NAME, name, "1-128 characters of [A-Za-z0-9_.-]", InvalidKey)


class NodeMemory:
    """Node-scoped memory (``mode="node"``) or the conversation's memory (``mode="conversation"``).

    Args:
        conversations: the store holding the conversation's messages (and its thread).
        app_id, conversation_id, node_id: the scope.
        mode: ``node`` (default) or ``conversation``.
        max_token_limit: default token limit of :meth:`get_history_prompt_messages`.
        token_counter: counts tokens in node mode (name or callable; default the store's counter).

    Raises:
        InvalidConfiguration: unknown mode, or no ``conversation_id`` (node memory lives inside a
            conversation: Chatflow only).
        InvalidKey, InvalidSessionId: a malformed id.
    """

    def __init__(
        self,
        conversations: ConversationStore,
        app_id: str,
        conversation_id: str | None,
        node_id: str,
        *,
        mode: str = "node",
        max_token_limit: int = 2000,
        token_counter: str | TokenCounter | None = None,
    ) -> None:
        if mode not in MODES:
            raise InvalidConfiguration(f"mode {short_repr(mode)}: must be one of {', '.join(MODES)}")
        if not conversation_id:
            raise InvalidConfiguration(
                f"conversation_id {conversation_id!r}: {mode} memory needs the conversation it lives in "
                "(node memory is available in chatflows only)"
            )
        self.conversations = conversations
        self.mode = mode
        self.app_id = _check_name(app_id, "app_id")
        self.conversation_id = check_conversation_id(conversation_id)
        self.node_id = _check_name(node_id, "node_id")
        check_limits(None, max_token_limit)
        self.max_token_limit = max_token_limit
        self.count_tokens = conversations.count_tokens if token_counter is None else _counter(token_counter)
        engine = conversations.engine
        self._key = _NODE.key(
            engine.tag, conversation=self.conversation_id, app=self.app_id, node=self.node_id
        )
        self._pending: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    @property
    def aio(self) -> AsyncNodeMemory:
        """The async face: the same methods as coroutines (:mod:`memstack.tiers.conversation.aio`)."""
        return AsyncNodeMemory(self)

    # -- writing -----------------------------------------------------------------------------
    def add_messages(
        self,
        workflow_run_id: str,
        user_content: str,
        user_files: Files,
        assistant_content: str,
        assistant_files: Files,
    ) -> None:
        """Upsert the turn of ``workflow_run_id`` in the write buffer (persisted by :meth:`flush`).

        Raises:
            InvalidValue: empty run id, non-string content, or an invalid file reference; a lone
                surrogate or over-long text (see :func:`~memstack.tiers.conversation.inputs.check_node_turn`).
        """
        if not isinstance(workflow_run_id, str) or not workflow_run_id:
            raise InvalidValue(f"workflow_run_id {short_repr(workflow_run_id)}: must be a non-empty string")
        for name, text in (("user_content", user_content), ("assistant_content", assistant_content)):
            if not isinstance(text, str):
                raise InvalidValue(f"{name} {short_repr(text)}: must be a string")
        check_node_turn(workflow_run_id, user_content, assistant_content)
        turn = {
            "user_content": user_content,
            "user_files": [f.to_dict() for f in check_files(user_files)],
            "assistant_content": assistant_content,
            "assistant_files": [f.to_dict() for f in check_files(assistant_files)],
        }
        if self.mode == "conversation":
            return
        with self._lock:
            self._pending[workflow_run_id] = turn

    def flush(self) -> None:
        """Write every buffered turn in one atomic batch; no-op when nothing is pending."""
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return
        fields = {run_id: json.dumps(turn, ensure_ascii=False) for run_id, turn in pending.items()}
        try:
            self.conversations.engine.hset(self._key, fields)
        except BaseException:
            with self._lock:
                self._pending = {**pending, **self._pending}
            raise

    def clear(self) -> None:
        """Forget every turn of this node (stored and buffered). No-op in conversation mode."""
        if self.mode == "conversation":
            return
        with self._lock:
            self._pending = {}
        self.conversations.engine.delete(self._key)

    def exists(self) -> bool:
        """True when this node has stored or buffered turns (conversation mode: any message)."""
        if self.mode == "conversation":
            return self.conversations.count(self.conversation_id) > 0
        with self._lock:
            if self._pending:
                return True
        return self.conversations.engine.exists(self._key)

    def document(self) -> dict[str, Any]:
        """Design A's JSON document: ``{"version": 1, "turns": {run_id: turn}}`` (stored + buffered)."""
        stored = self.conversations.engine.hgetall(self._key)
        turns = {run_id: json.loads(text) for run_id, text in sorted(stored.items())}
        with self._lock:
            turns.update(json.loads(json.dumps(self._pending)))
        return {"version": 1, "turns": turns}

    # -- reading -----------------------------------------------------------------------------
    def thread_run_ids(self, current_message_id: str | None = None) -> list[str]:
        """Workflow run ids of the active thread, oldest first, without the in-flight request."""
        thread = self.conversations.thread(
            self.conversation_id, current_message_id, message_limit=DEFAULT_MESSAGE_LIMIT
        )
        run_ids: list[str] = []
        for message in drop_in_flight(thread[::-1])[::-1]:
            if message.workflow_run_id and message.workflow_run_id not in run_ids:
                run_ids.append(message.workflow_run_id)
        return run_ids

    def get_history_prompt_messages(
        self,
        max_token_limit: int | None = None,
        message_limit: int | None = None,
        *,
        current_message_id: str | None = None,
        image_detail: str = "high",
        token_budget: TokenBudget | Mapping[str, Any] | int | None = None,
    ) -> list[PromptMessage]:
        """The history as OpenAI chat messages, oldest first, within the token limit:
        ``max_token_limit``, else what ``token_budget`` leaves (Dify's rule, see
        :func:`~memstack.tiers.conversation.budget.history_token_budget`), else the node's default.

        Raises:
            EntryNotFound: ``current_message_id`` is not in the conversation.
            InvalidInput: both ``max_token_limit`` and ``token_budget``, or a negative count.
            InvalidValue: a limit that is not an int (or None) of magnitude at most 2**53.
        """
        if token_budget is None and max_token_limit is None:
            max_token_limit = self.max_token_limit
        limit = resolve_token_limit(max_token_limit, token_budget)
        check_limits(message_limit, limit)
        if self.mode == "conversation":
            return self.conversations.history(
                self.conversation_id, current_message_id, limit, message_limit, image_detail=image_detail
            )
        run_ids = self.thread_run_ids(current_message_id)
        if not run_ids:
            return []
        stored = self.conversations.engine.hmget(self._key, run_ids)
        with self._lock:
            pending = dict(self._pending)
        messages: list[PromptMessage] = []
        for run_id, text in zip(run_ids, stored, strict=True):
            turn = pending.get(run_id) or (json.loads(text) if text is not None else None)
            if turn is None:
                continue
            for role in ("user", "assistant"):
                files = check_files(turn[f"{role}_files"])
                content = turn[f"{role}_content"]
                messages.append(prompt_message(role, content, files, image_detail=image_detail))
        try:
            tokens = [count_message(m, self.count_tokens) for m in messages]
        except Exception:
            _log.exception("token counting failed for node %s: history returned untruncated", self.node_id)
            return messages
        return prune(messages, [m["role"] for m in messages], tokens, limit)

    def get_history_prompt_text(
        self,
        human_prefix: str = "Human",
        ai_prefix: str = "Assistant",
        max_token_limit: int | None = None,
        message_limit: int | None = None,
        *,
        current_message_id: str | None = None,
        token_budget: TokenBudget | Mapping[str, Any] | int | None = None,
    ) -> str:
        """:meth:`get_history_prompt_messages` as ``"Human: …\\nAssistant: …"`` lines.

        Raises:
            EntryNotFound: ``current_message_id`` is not in the conversation.
            InvalidInput: both ``max_token_limit`` and ``token_budget``, or a negative count.
        """
        messages = self.get_history_prompt_messages(
            max_token_limit, message_limit, current_message_id=current_message_id, token_budget=token_budget
        )
        return history_text(messages, human_prefix, ai_prefix)


def _counter(spec: str | TokenCounter) -> TokenCounter:
    return token_counter(spec)


class AsyncNodeMemory(Face[NodeMemory]):
    """:class:`NodeMemory` for asyncio code (:mod:`memstack.tiers.conversation.aio`)."""

    add_messages = Twin(NodeMemory.add_messages)
    flush = Twin(NodeMemory.flush)
    clear = Twin(NodeMemory.clear)
    exists = Twin(NodeMemory.exists)
    document = Twin(NodeMemory.document)
    thread_run_ids = Twin(NodeMemory.thread_run_ids)
    get_history_prompt_messages = Twin(NodeMemory.get_history_prompt_messages)
    get_history_prompt_text = Twin(NodeMemory.get_history_prompt_text)
