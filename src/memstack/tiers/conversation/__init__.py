"""The conversation tier: threads with branches, token-limited history, turn memory with its log.

* :class:`ConversationStore` — messages with ``parent_message_id`` branches and the active thread's
  token-limited history (Dify ``TokenBufferMemory``, seed ``002``).
* :class:`TurnMemory` — turns per session and the turn log (RockBot conversation tier).

Async face (:mod:`memstack.tiers.conversation.aio`): ``store.aio`` offers the same methods as
coroutines. Dify's node memory and n8n's sliding windows, built on this tier, live in
:mod:`memstack.compat.dify` and :mod:`memstack.compat.n8n`.

The pure parts — :func:`extract_thread`, :func:`prune`, :func:`history_text`,
:func:`history_token_budget` — work on plain data.
"""

from __future__ import annotations

from .budget import TokenBudget, history_token_budget
from .message import FileRef, Message
from .prompt import PromptMessage, history_text, prompt_message
from .prune import prune
from .store import ConversationStore
from .thread import UUID_NIL, extract_thread
from .turns import Turn, TurnMemory

__all__ = [
    "UUID_NIL",
    "ConversationStore",
    "FileRef",
    "Message",
    "PromptMessage",
    "TokenBudget",
    "Turn",
    "TurnMemory",
    "extract_thread",
    "history_text",
    "history_token_budget",
    "prompt_message",
    "prune",
]
