"""What shared memory forgets: a whole board (its values, semantic cache and documents), and a
subject's versions on any board (see :mod:`memstack.services.lifecycle.plans`).

A board's index keys go first (the custom-key index, the change logs' ids and epochs): from then
on no reader reaches the rest, and every process's in-memory mirror of the cache and documents
rebuilds (their epoch is gone).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from ...engines import Engine
from ...engines.bulk import delete_prefix
from ...foundation.keyspace import label_of
from ...foundation.keyspace.families import CACHE, DOCUMENTS, SHARED
from ...index import SetKeys
from .cache_store import CacheEntries
from .documents import DocumentStore
from .serialize import NAME_RULE
from .storage import SharedStorage

__all__ = ["FORGETS", "LEFTOVERS", "forget_board", "forget_owned", "object_keys", "owned_left"]

Counts = dict[str, int]


def forget_board(engine: Engine, board: str) -> Counts:
    """Every key of the board, its cache and its documents."""
    if not NAME_RULE.fullmatch(board):
        return {}
    data, cache, documents = (stem.render(engine.tag, board=board) for stem in (SHARED, CACHE, DOCUMENTS))
    values = delete_prefix(engine, data, (SharedStorage(engine, board, None).index,))
    cache_log, documents_log = SetKeys(cache), SetKeys(documents)
    cached = delete_prefix(engine, cache, (cache_log.ids, cache_log.epoch))
    docs = delete_prefix(engine, documents, (documents_log.ids, documents_log.epoch))
    return {"shared": values + docs, "semantic_cache": cached}


def board_leftovers(engine: Engine, board: str) -> int:
    """Keys of the board, its cache and its documents still stored."""
    if not NAME_RULE.fullmatch(board):
        return 0
    stems = (stem.render(engine.tag, board=board) for stem in (SHARED, CACHE, DOCUMENTS))
    return sum(1 for base in stems for _ in engine.scan(base))


def _renew(engine: Engine, log: SetKeys, removed: int) -> None:
    """After a forget removed entries: a change log without their ids (see
    :func:`memstack.index.changelog.renew`)."""
    if removed:
        with engine.batch() as batch:
            log.renew(batch)


def forget_owned(engine: Engine, subject: str, kind: str, board: str, names: Sequence[str]) -> Counts:
    """The subject's versions among ``names`` of ``board``: keys (``kind`` ``shared``), cache
    entry ids (``cache``) or document keys (``document``); a version written over theirs stays."""
    if kind == "cache":
        entries = CacheEntries(engine, board)
        removed = entries.remove_owned(list(names), subject)
        _renew(engine, entries.log, removed)
        return {"semantic_cache": removed}
    if kind == "document":
        documents = DocumentStore(engine, board)
        gone = sum(documents.delete_owned(key, subject) for key in names)
        _renew(engine, SetKeys(DOCUMENTS.render(engine.tag, board=board)), gone)
        return {"shared": gone}
    storage = SharedStorage(engine, board, None)
    held = [storage.delete(key, custom=True, subject=subject) for key in names]
    return {"shared": sum(1 for entry in held if entry.exists and entry.subject == subject)}


def object_keys(engine: Engine, kind: str, board: str, names: Sequence[str]) -> list[str]:
    """The keys of ``names`` of ``board``: keys (``kind`` ``shared``), cache entry ids (``cache``) or
    document keys (``document``)."""
    if kind == "cache":
        prefix = CacheEntries(engine, board).entry
    elif kind == "document":
        prefix = DocumentStore(engine, board).doc_prefix
    else:
        prefix = SharedStorage(engine, board, None).entry_key("")
    return [prefix + name for name in names]


def owned_left(engine: Engine, subject: str, kind: str, board: str, names: Sequence[str]) -> int:
    """Objects of ``board`` among ``names`` still holding a version labelled ``subject``."""
    if not names:
        return 0
    raws = engine.mget(object_keys(engine, kind, board, names))
    return sum(1 for raw in raws if raw is not None and label_of(json.loads(raw)) == subject)


FORGETS: Final = {"board": (forget_board,)}
"""The selectors this tier forgets, with its steps for each."""
LEFTOVERS: Final = {"board": board_leftovers}
"""What the verification asks this tier, per selector."""
