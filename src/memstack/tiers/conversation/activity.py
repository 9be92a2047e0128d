"""Which users have new turns, and in which conversations, without reading any conversation.

Every append to a conversation labelled with a user also writes, in the same batch, the time of
its newest message into the user's hash ``subj:{user}:turns`` (family ``subject.turns``: field
conversation id, value that time). A background extract pass therefore finds the users with new
turns by reading one small hash per user, and a pass reads only the conversations that changed
since its cursor: a user with a long history costs one read per pass, not one per conversation.

On a Redis Cluster, where that hash lives in the user's slot and the conversation in its own, the
time is written just before the append (like the subject set): the hash may be ahead of the
conversation, never behind it, so no turn is ever skipped.

The same append records the user in the conversation's own key ``conv:{t}:owner`` (family
``conversation.owner``, always in the append's batch): a pass that names a conversation checks it,
so naming another user's conversation never reads their turns. Conversations appended to before
this key existed have none and are read as unlabelled ones.
"""

from __future__ import annotations

from typing import Any, Final

from ...engines.base import Engine
from ...foundation.keyspace import family_named, family_of

__all__ = ["activity", "activity_key", "note_activity", "owner_of", "users_with_turns"]

_TURNS: Final = family_named("subject.turns")
_OWNER: Final = family_named("conversation.owner")


def activity_key(engine: Engine, user: str) -> str:
    """The hash of one user's conversations and the time of their newest message."""
    return _TURNS.key(engine.tag, subject=user)


def note_activity(engine: Engine, batch: Any, user: str | None, conversation_id: str, at: float) -> None:
    """Queue recording that ``conversation_id`` of ``user`` holds a message of time ``at`` (in
    ``batch``, or at once on a cluster; a None user does nothing)."""
    if user is None:
        return
    batch.set(_OWNER.key(engine.tag, conversation=conversation_id), user)
    key, value = activity_key(engine, user), {conversation_id: repr(float(at))}
    if engine.clustered:
        engine.hset(key, value)
    else:
        batch.hset(key, value)


def activity(engine: Engine, user: str) -> dict[str, float]:
    """Conversation id -> time of its newest message, for every conversation of ``user`` written
    since this index exists (older ones are absent: a reader treats them as changed)."""
    return {
        conversation: float(at) for conversation, at in engine.hgetall(activity_key(engine, user)).items()
    }


def users_with_turns(engine: Engine) -> list[str]:
    """Every user with a labelled conversation turn, sorted."""
    found = set()
    for key in engine.scan(_TURNS.stem.lead):
        family = family_of(key)[1]
        if family is not None and family[0] is _TURNS:
            found.add(family[1]["subject"])
    return sorted(found)


def owner_of(engine: Engine, conversation_id: str) -> str | None:
    """The user whose turns ``conversation_id`` holds (the latest labelled append's; None: none
    recorded)."""
    return engine.get(_OWNER.key(engine.tag, conversation=conversation_id))
