"""The conversation tier: threads with branches, token-limited history, node memory, sliding
windows and turn memory with its log.

* :class:`ConversationStore` — messages with ``parent_message_id`` branches and the active thread's
  token-limited history (Dify ``TokenBufferMemory``, seed ``002``).
* :class:`NodeMemory` — the memory of one workflow node inside a conversation (Dify
  ``NodeTokenBufferMemory``, design A).
* :class:`SlidingWindows` — per-workflow-session windows of the last N messages with idle expiry
  (hetumind / n8n Simple Memory, seed ``004``).
* :class:`TurnMemory` — turns per session and the turn log (RockBot conversation tier).

Async faces (:mod:`memstack.tiers.conversation.aio`): ``store.aio``, ``windows.aio``, ``node.aio`` offer
the same methods as coroutines.

The pure parts — :func:`extract_thread`, :func:`prune`, :func:`history_text`,
:func:`history_token_budget` — work on plain data.
"""

from __future__ import annotations

from ...compat.dify.node_memory import NodeMemory
from ...compat.n8n.config import SimpleMemoryConfig
from ...compat.n8n.windows import SlidingWindows
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
    "NodeMemory",
    "PromptMessage",
    "SimpleMemoryConfig",
    "SlidingWindows",
    "TokenBudget",
    "Turn",
    "TurnMemory",
    "extract_thread",
    "history_text",
    "history_token_budget",
    "prompt_message",
    "prune",
]
