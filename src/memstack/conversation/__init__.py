"""The conversation tier: threads with branches, token-limited history, node memory, sliding
windows and turn memory with its log.

* :class:`ConversationStore` — messages with ``parent_message_id`` branches and the active thread's
  token-limited history (Dify ``TokenBufferMemory``, seed ``002``).
"""

from __future__ import annotations

from .message import FileRef, Message
from .prompt import PromptMessage, history_text
from .store import ConversationStore
from .thread import UUID_NIL, extract_thread

__all__ = [
    "UUID_NIL",
    "ConversationStore",
    "FileRef",
    "Message",
    "PromptMessage",
    "extract_thread",
    "history_text",
]
