"""Refusals a tool words for the LLM itself (a full namespace, an unknown id), as typed errors.

A tool raises ``refused(NamespaceFull, "not saved, ...")``: the type gives the status on every
surface (429, 404...), and the dispatcher shows the text as it is instead of prefixing
``'{tool} failed:'`` as it does for errors from deeper down.
"""

from __future__ import annotations

from typing import Final, TypeVar

from ...foundation.errors import MemstackError

__all__ = ["is_worded", "refused"]

E = TypeVar("E", bound=MemstackError)
_WORDED: Final = "_memstack_tool_worded"


def refused(kind: type[E], text: str) -> E:
    """A ``kind`` error whose ``text`` is already worded for the LLM."""
    exc = kind(text)
    setattr(exc, _WORDED, True)
    return exc


def is_worded(exc: BaseException) -> bool:
    """True for an error made by :func:`refused`."""
    return getattr(exc, _WORDED, False) is True
