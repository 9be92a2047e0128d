"""A scope's BM25 index handed to a snapshot that serialises it outside the cache lock.

A snapshot of a big scope serialises its BM25 index (0.2 s at 100,000 entries) and copied its
graph (0.15 s). Done under the cache lock, every save of the scope waited for it: a save's cost
grew with the scope. Instead the snapshot freezes the index under the lock (the cache fresh, so it
says exactly what its version says) and serialises it and the graphs without it. The refreshes made
meanwhile leave the index alone and note the ids they changed; when the snapshot is done those ids
are taken again from the cache's current texts (:meth:`~.index_cache.ScopeCache.thaw`). Refreshes
never change a graph (they leave that to the next search: ``ScopeCache.sync_graphs``), and
searches wait for the snapshot before they take the lock (:meth:`~.index_cache.ScopeCache.settle`),
so nothing changes what the snapshot encodes and no search sees a frozen index.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...search import Bm25Index

__all__ = ["Export", "catch_up"]


@dataclass(slots=True, eq=False)
class Export:
    """What a snapshot serialises: nothing changes them until ``done``; the ids changed meanwhile
    are kept in ``deferred``."""

    profile: str
    index: Bm25Index
    done: threading.Event = field(default_factory=threading.Event)
    deferred: set[str] = field(default_factory=set)


def catch_up(frozen: Export, texts: Mapping[str, str], indexes: Mapping[str, Bm25Index]) -> None:
    """Bring the frozen index, if still in use, up to the current ``texts``."""
    index = frozen.index
    if indexes.get(frozen.profile) is index:
        for entry_id in frozen.deferred:
            index.remove(entry_id)
            text = texts.get(entry_id)
            if text is not None:
                index.add(entry_id, text)
