"""The selectors of a forget: what each names, and the rule a value must follow.

A session id is checked by the widest rule of the tiers that keep session data (the turn log's:
``[A-Za-z0-9_./@:-]{1,256}``), and each tier forgets what it can name with it: a sliding window
of session ``a.b@c`` goes although the session-state tier would never accept that id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, TypedDict

from ...foundation.errors import InvalidKey, InvalidSessionId
from ...foundation.keyspace import check_subject
from ...foundation.limits import check_match, short_repr
from ...tiers.conversation.message import check_conversation_id
from ...tiers.conversation.turns import SESSION_RULE
from ...tiers.longterm.validate import check_scope
from ...tiers.shared.serialize import check_name
from ...tiers.working.keys import normalize_prefix

__all__ = ["CHECKS", "SELECTORS", "Selector", "check_namespace", "check_session"]

SELECTORS: Final = ("subject", "session", "conversation", "scope", "namespace", "board")
"""The selectors of :func:`memstack.services.lifecycle.forget`, one per call."""


class Selector(TypedDict, total=False):
    """The selectors as keyword arguments (:meth:`memstack.Memory.forget`): give exactly one."""

    subject: str | None
    session: str | None
    conversation: str | None
    scope: str | None
    namespace: str | None
    board: str | None


def check_session(session_id: object) -> str:
    """``session_id`` if some tier may hold data under it.

    Raises:
        InvalidSessionId: not 1-256 characters of ``[A-Za-z0-9_./@:-]``.
    """
    return check_match(
        session_id, SESSION_RULE, "session", "1-256 characters of [A-Za-z0-9_./@:-]", InvalidSessionId
    )


def check_namespace(prefix: object) -> str:
    """``prefix`` normalised (a whole namespace, a top segment, or a path inside a namespace).

    Raises:
        InvalidKey: an ill-formed or empty path.
    """
    normalised = normalize_prefix(prefix)
    if not normalised:
        raise InvalidKey(f"namespace {short_repr(prefix)}: must name a namespace, a top segment or a path")
    return normalised


CHECKS: Final[Mapping[str, Callable[[str], str]]] = {
    "subject": check_subject,
    "session": check_session,
    "conversation": check_conversation_id,
    "scope": check_scope,
    "namespace": check_namespace,
    "board": check_name,
}
"""Each selector's check (it raises the tier's own error on a bad value)."""
