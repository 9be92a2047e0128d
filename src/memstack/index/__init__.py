"""The engine-backed index kit: what every tier that searches an engine-stored set is built on.

* :mod:`.changelog`: the change log written with every change of a set, and
  :func:`~memstack.index.changelog.changes_since` to read it since a version;
* :mod:`.mirror`: :class:`~memstack.index.mirror.Mirror`, an in-process image of one set kept
  fresh from that log across processes;
* :mod:`.vectors`: :class:`~memstack.index.vectors.VectorIndex`, unit vectors by id searched by cosine;
* :mod:`.codec`: the one stored form of vectors;
* :mod:`.registry`: the process's one registry of mirrors, bounded in count and memory.

Long-term memory (:mod:`memstack.tiers.longterm.index_cache`), the semantic cache, the document store and
the LangGraph store (:mod:`memstack.agent.lgstore`) are its clients.
"""

from __future__ import annotations

from .changelog import LOG_MAX, SetKeys, changes_since, log_change, record, renew, restart
from .codec import Matrix, StoredVectors
from .mirror import Mirror
from .registry import memory_bound, mirror
from .vectors import VectorIndex

__all__ = [
    "LOG_MAX",
    "Matrix",
    "Mirror",
    "SetKeys",
    "StoredVectors",
    "VectorIndex",
    "changes_since",
    "log_change",
    "memory_bound",
    "mirror",
    "record",
    "renew",
    "restart",
]
