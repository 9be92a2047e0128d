"""What the conversation tier forgets: a conversation (its messages and node memory), and for a
session its sliding windows and its turns (see :mod:`memstack.services.lifecycle.plans`).

A window belongs to a session by the keyspace's own rule
(:func:`~memstack.foundation.keyspace.window_session`),
whatever the session id holds: ``wf__a__b`` is session ``a__b``, never ``b``.
"""

from __future__ import annotations

from typing import Final

from ...engines import Engine
from ...engines.bulk import delete_keys
from ...foundation.keyspace import family_of, window_session
from ...foundation.keyspace.families import CONVERSATION
from .message import CONVERSATION_RULE
from .turns import TurnMemory
from .turns_forget import forget_session_turns, turn_leftovers
from .window_keys import PREFIX as WINDOW_PREFIX

__all__ = [
    "FORGETS",
    "LEFTOVERS",
    "forget_conversation",
    "forget_turns",
    "forget_windows",
    "turn_conversations",
]

Counts = dict[str, int]
_WINDOW_PARTS: Final = {"window": False, "node_window": True}
_COUNT: Final = ("conversation.count", "conversation.log")


def _base(engine: Engine, conversation_id: str) -> str:
    return CONVERSATION.render(engine.tag, conversation=conversation_id)


def forget_conversation(engine: Engine, conversation_id: str) -> Counts:
    """The count and the log go first, in one batch (the conversation is then gone for every
    reader), then the message-id index and node memory seen before it."""
    if not CONVERSATION_RULE.fullmatch(conversation_id):
        return {}
    base = _base(engine, conversation_id)
    first = [
        k for k in engine.scan(base) if (found := family_of(k)[1]) is not None and found[0].name in _COUNT
    ]
    rest = sorted(k for k in engine.scan(base) if k not in first)
    removed = int(engine.delete(*first)) if first else 0
    return {"conversations": removed + delete_keys(engine, rest)}


def conversation_leftovers(engine: Engine, conversation_id: str) -> int:
    """Keys of the conversation still stored."""
    if not CONVERSATION_RULE.fullmatch(conversation_id):
        return 0
    return sum(1 for _ in engine.scan(_base(engine, conversation_id)))


def _windows_of(engine: Engine, session_id: str) -> list[str]:
    found = []
    for key in engine.scan(WINDOW_PREFIX):
        family = family_of(key)[1]
        if family is None:
            continue
        for part, node in _WINDOW_PARTS.items():
            scope = family[1].get(part)
            if scope is not None and window_session(scope, node=node) == session_id:
                found.append(key)
    return sorted(found)


def forget_windows(engine: Engine, session_id: str) -> Counts:
    """The sliding windows of every workflow and node kept for the session."""
    return {"conversations": delete_keys(engine, _windows_of(engine, session_id))}


def turn_conversations(engine: Engine, session_id: str) -> list[str]:
    """The conversations the session's turns were copied to (:mod:`.turn_source`)."""
    from .turn_source import candidates  # it imports the turn memory, as this module does

    subjects = {
        e.get("subject") for e in TurnMemory(engine).log_entries() if e.get("session_id") == session_id
    }
    return sorted({c for s in subjects | {None} for c in candidates(session_id, s)})


def forget_turns(engine: Engine, session_id: str) -> Counts:
    """The session's turns, its entries of the turn log and the conversations they live in."""
    copies = turn_conversations(engine, session_id)
    counts = {"turn_log": forget_session_turns(TurnMemory(engine), session_id)}
    counts["conversations"] = sum(forget_conversation(engine, c).get("conversations", 0) for c in copies)
    return counts


def session_leftovers(engine: Engine, session_id: str) -> int:
    """Windows and turns of the session still stored."""
    copies = sum(conversation_leftovers(engine, c) for c in turn_conversations(engine, session_id))
    return len(_windows_of(engine, session_id)) + turn_leftovers(TurnMemory(engine), session_id) + copies


FORGETS: Final = {
    "session": (forget_windows, forget_turns),
    "conversation": (forget_conversation,),
}
"""The selectors this tier forgets, with its steps for each."""
LEFTOVERS: Final = {"session": session_leftovers, "conversation": conversation_leftovers}
"""What the verification asks this tier, per selector."""
