"""What shared memory forgets: a whole board (its values, semantic cache and documents), and a
subject's versions on any board (see :mod:`memstack.lifecycle.plans`).

A board's index keys go first (the custom-key index, the change logs' ids and epochs): from then
on no reader reaches the rest, and every process's in-memory mirror of the cache and documents
rebuilds (their epoch is gone).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from ..engines import Engine
from ..engines.bulk import delete_prefix
from ..keyspace import label_of
from ..keyspace.families import CACHE, DOCUMENTS, SHARED
from .cache_store import CacheEntries
from .documents import DocumentStore
from .mirror import ChangeLog
from .serialize import NAME_RULE
from .storage import SharedStorage

__all__ = ["FORGETS", "LEFTOVERS", "forget_board", "forget_owned", "owned_left"]

Counts = dict[str, int]


def forget_board(engine: Engine, board: str) -> Counts:
    """Every key of the board, its cache and its documents."""
    if not NAME_RULE.fullmatch(board):
        return {}
    data, cache, documents = (stem.render(engine.tag, board=board) for stem in (SHARED, CACHE, DOCUMENTS))
    values = delete_prefix(engine, data, (SharedStorage(engine, board, None).index,))
    cache_log, documents_log = ChangeLog(cache), ChangeLog(documents)
    cached = delete_prefix(engine, cache, (cache_log.ids, cache_log.epoch))
    docs = delete_prefix(engine, documents, (documents_log.ids, documents_log.epoch))
    return {"shared": values + docs, "semantic_cache": cached}


def board_leftovers(engine: Engine, board: str) -> int:
    """Keys of the board, its cache and its documents still stored."""
    if not NAME_RULE.fullmatch(board):
        return 0
    stems = (stem.render(engine.tag, board=board) for stem in (SHARED, CACHE, DOCUMENTS))
    return sum(1 for base in stems for _ in engine.scan(base))


def forget_owned(engine: Engine, subject: str, kind: str, board: str, names: Sequence[str]) -> Counts:
    """The subject's versions among ``names`` of ``board``: keys (``kind`` ``shared``), cache
    entry ids (``cache``) or document keys (``document``); a version written over theirs stays."""
    if kind == "cache":
        return {"semantic_cache": CacheEntries(engine, board).remove_owned(list(names), subject)}
    if kind == "document":
        documents = DocumentStore(engine, board)
        return {"shared": sum(documents.delete_owned(key, subject) for key in names)}
    storage = SharedStorage(engine, board, None)
    gone = [storage.delete(key, custom=True, subject=subject) for key in names]
    return {"shared": sum(1 for entry in gone if entry.exists and entry.subject == subject)}


def owned_left(engine: Engine, subject: str, kind: str, board: str, names: Sequence[str]) -> int:
    """Objects of ``board`` among ``names`` still holding a version labelled ``subject``."""
    if not names:
        return 0
    if kind == "cache":
        prefix = CacheEntries(engine, board).entry
    elif kind == "document":
        prefix = DocumentStore(engine, board).doc_prefix
    else:
        prefix = SharedStorage(engine, board, None).entry_key("")
    raws = engine.mget([prefix + name for name in names])
    return sum(1 for raw in raws if raw is not None and label_of(json.loads(raw)) == subject)


FORGETS: Final = {"board": (forget_board,)}
"""The selectors this tier forgets, with its steps for each."""
LEFTOVERS: Final = {"board": board_leftovers}
"""What the verification asks this tier, per selector."""
