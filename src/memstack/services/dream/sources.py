"""The turns one pass may read: its user's, never another user's.

A pass over a scope reads the turns of ONE user (its ``user``; by default the scope's own name, as
a user's memories live in the scope named after them):

- every conversation of the conversation store registered for that user (``subject=user`` on
  its messages: :mod:`memstack.foundation.keyspace.subjects`); the turns recorded through the
  turn log are there too (:mod:`memstack.tiers.conversation.turn_source`): the turn log itself is
  never read, conversations are the one source of turns;
- the conversations and turn-log sessions the caller names (``sessions``), which is the only way
  a conversation without a subject is ever read.

Turns of another user never come in, so nothing learnt in a scope cites another user's words. Each
turn is a mapping ``{session_id, role, content, timestamp, message_id, subject?}`` (the shape of a
turn-log entry), oldest first; a message id repeated across two conversations is qualified with its
conversation (``conversation:message``) so the model cites each turn unambiguously.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...engines import Engine
from ...foundation.errors import InvalidValue
from ...foundation.keyspace.subjects import subject_key
from ...tiers.conversation.activity import activity, owner_of
from ...tiers.conversation.message import CONVERSATION_RULE
from ...tiers.conversation.turn_source import candidates

if TYPE_CHECKING:
    from ...tiers.conversation import ConversationStore, TurnMemory

__all__ = ["Turns", "pass_turns", "user_conversations"]

Turns = list[dict[str, Any]]


def user_conversations(engine: Engine, user: str) -> list[str]:
    """The ids of the conversations registered for ``user``, sorted."""
    found = set()
    for name in engine.smembers(subject_key(engine, user)):
        kind, _, rest = name.partition("\t")
        if kind == "conversation" and "\t" not in rest:
            found.add(rest)
    return sorted(found)


def _conversation_turns(store: ConversationStore, conversation_id: str, subject: str | None) -> Turns:
    out: Turns = []
    for message in store.messages(conversation_id):
        turn: dict[str, Any] = {
            "session_id": conversation_id,
            "conversation_id": conversation_id,
            "role": message.role,
            "content": message.content,
            "timestamp": message.created_at,
            "message_id": message.message_id,
        }
        if subject is not None:
            turn["subject"] = subject
        out.append(turn)
    return out


def _refuse_others(engine: Engine, user: str | None, named: set[str]) -> None:
    for conversation_id in sorted(named):
        owner = owner_of(engine, conversation_id)
        if owner is not None and owner != user:
            raise InvalidValue(
                f"sessions: conversation {conversation_id!r} holds another user's turns;"
                " a pass reads only its own user's conversations and unlabelled ones"
            )


def pass_turns(
    user: str | None,
    sessions: Sequence[str] | None,
    *,
    conversations: ConversationStore | None,
    turns: TurnMemory | None,
    since: float | None = None,
) -> Turns:
    """Every turn a pass of ``user`` naming ``sessions`` may read, oldest first (see the module
    docstring). With ``sessions``, only the turns of those sessions or conversations: the user's,
    and the unlabelled ones (a turn labelled with another user never). ``since``: the pass has
    read every turn older than this, so a conversation of the user whose newest message is older
    (:mod:`memstack.tiers.conversation.activity`) is not read at all.

    Raises:
        InvalidValue: a named conversation holds another user's turns (nothing is read).
    """
    found: Turns = []
    if conversations is None:
        return found
    engine = conversations.engine
    mine = set(user_conversations(engine, user)) if user is not None else set()
    wanted = _wanted(engine, user, set(sessions or ()), mine)
    _refuse_others(engine, user, wanted - mine)
    if since is not None and user is not None:
        newest = activity(engine, user)
        wanted -= {c for c in mine if newest.get(c, since) < since}
    for conversation_id in sorted(wanted):
        label = user if conversation_id in mine else None
        found += _conversation_turns(conversations, conversation_id, label)
    found.sort(key=lambda t: float(t.get("timestamp", 0)))
    _unique_ids(found)
    return found


def _wanted(engine: Engine, user: str | None, named: set[str], mine: set[str]) -> set[str]:
    """The conversations a pass reads: the user's (only the named ones among them when the pass
    names sessions) and those named; a named session of the turn log lives in a conversation of
    the same name or of its own."""
    derived = {c for s in named for c in (*candidates(s, user), *candidates(s, None))}
    derived = {c for c in derived if c not in named and (c in mine or owner_of(engine, c) is None)}
    given = {s for s in named if CONVERSATION_RULE.fullmatch(s)} | derived
    return (mine & given if named else mine) | given


def _unique_ids(found: Turns) -> None:
    """A message id that two conversations share is told apart by its session (in place)."""
    counts: dict[str, int] = {}
    for turn in found:
        counts[turn["message_id"]] = counts.get(turn["message_id"], 0) + 1
    for turn in found:
        if counts[turn["message_id"]] > 1:
            turn["message_id"] = f"{turn['session_id']}:{turn['message_id']}"
