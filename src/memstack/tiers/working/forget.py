"""What working memory forgets: every entry under a namespace prefix (segment-aware: whole
namespaces, or part of one), a session's namespace (``session/{id}``), a subject's entry versions
(see :mod:`memstack.services.lifecycle.plans`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from ...engines import Engine
from ...foundation.errors import InvalidKey
from ...foundation.keyspace import label_of
from . import keys as wkeys
from .layout import RegistryKeys
from .store import WorkingMemory

__all__ = ["FORGETS", "LEFTOVERS", "forget_namespace", "forget_owned", "owned_left", "session_namespace"]

Counts = dict[str, int]


def session_namespace(session_id: str) -> str | None:
    """The working-memory namespace of a session (``session/{id}``, the id's case kept: ``alice``
    and ``Alice`` are two sessions), or None when the id cannot name one."""
    try:
        return wkeys.normalize_prefix(f"session/{session_id}")
    except InvalidKey:
        return None


def _namespaces_under(engine: Engine, prefix: str) -> list[str]:
    registry = RegistryKeys.of(engine)
    members = engine.smembers(registry.namespaces(wkeys.top_segment(prefix)))
    return sorted(ns for ns in members if wkeys.covers(prefix, ns))


def forget_namespace(engine: Engine, prefix: str) -> Counts:
    """Every entry under ``prefix`` (a normalised prefix, segment-aware)."""
    if prefix.count("/") >= 2:  # inside one namespace: its entries under the prefix
        return {"working": WorkingMemory(engine, wkeys.namespace_of(prefix)).clear(prefix)}
    removed = sum(WorkingMemory(engine, ns).clear() for ns in _namespaces_under(engine, prefix))
    return {"working": removed}


def namespace_leftovers(engine: Engine, prefix: str) -> int:
    """Entries still stored under ``prefix`` (live or not) and namespaces still registered."""
    if prefix.count("/") >= 2:
        namespace = wkeys.namespace_of(prefix)
        metas = engine.hgetall(WorkingMemory(engine, namespace).keys.meta)
        return sum(1 for key in metas if wkeys.covers(prefix, key))
    spaces = _namespaces_under(engine, prefix)
    return len(spaces) + sum(len(engine.hgetall(WorkingMemory(engine, ns).keys.meta)) for ns in spaces)


def forget_session(engine: Engine, session_id: str) -> Counts:
    """The session's own namespace."""
    namespace = session_namespace(session_id)
    return {} if namespace is None else forget_namespace(engine, namespace)


def session_leftovers(engine: Engine, session_id: str) -> int:
    """Entries of the session's namespace still stored."""
    namespace = session_namespace(session_id)
    return 0 if namespace is None else namespace_leftovers(engine, namespace)


def forget_owned(engine: Engine, subject: str, namespace: str, keys: Sequence[str]) -> Counts:
    """The entries of ``namespace`` among ``keys`` whose current version is the subject's."""
    removed, _ = WorkingMemory(engine, namespace).delete_owned(keys, subject)
    return {"working": removed}


def owned_left(engine: Engine, subject: str, namespace: str, keys: Sequence[str]) -> int:
    """Entries of ``namespace`` among ``keys`` still holding a version labelled ``subject``."""
    metas = engine.hmget(WorkingMemory(engine, namespace).keys.meta, list(keys)) if keys else []
    return sum(1 for meta in metas if meta is not None and label_of(json.loads(meta)) == subject)


FORGETS: Final = {"namespace": (forget_namespace,), "session": (forget_session,)}
"""The selectors this tier forgets, with its steps for each."""
LEFTOVERS: Final = {"namespace": namespace_leftovers, "session": session_leftovers}
"""What the verification asks this tier, per selector."""
