"""A follower's vector write: what an entry's stored vector says, and a write that never replaces
a vector stored meanwhile.

A follower reads an entry and its vector field, embeds the text, then writes. Between the read and
the write the entry's own writer (its embedding worker, a bulk writer) or another follower may
store a vector, maybe of another model; a plain write would replace it with the follower's (a
writer then finds its scope's fresh vectors "computed by another model"). There is no guard on a
hash field, so the write is guarded by the scope's version, read together with the field: every
vector write moves it (its change log line), so an unchanged version means an unchanged field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ...engines import Engine
from ...foundation.errors import InvalidValue
from .entry import from_json
from .layout import ScopeKeys, log_change
from .query import document_text
from .vectors import decode_vector, text_hash

__all__ = ["WRITE_TRIES", "put_vector", "vector_state"]

WRITE_TRIES: Final = 3
"""Writes of one vector in a round, each after the scope's version moved under the one before."""


def vector_state(raw: str | None, payload: str | None, model: str, dim: int) -> str:
    """``gone``, ``valid``, ``stale`` (another model's vector) or ``missing`` for one entry."""
    if raw is None:
        return "gone"
    try:
        entry = from_json(raw)
    except InvalidValue:  # never embeddable; the search caches leave it out too
        return "gone"
    stored = None if payload is None else decode_vector(payload)
    if stored is None:
        return "missing"
    if stored.model != model or stored.dim != dim:
        return "stale"
    return "valid" if stored.text_hash == text_hash(document_text(entry)) else "missing"


def put_vector(
    view: Engine,
    keys: ScopeKeys,
    job: tuple[str, str, str],
    version: str | None,
    wanted: Callable[[str, str | None, str | None], bool],
) -> tuple[bool, str | None]:
    """Store ``job``'s payload (``(entry id, entry as embedded, payload)``) as the entry's vector,
    guarded by the entry being unchanged and the scope's version being ``version`` (read with the
    vector field that made the follower embed it). When the version moved, the entry, its field
    and the version are read again and the write is tried again while ``wanted(id, entry, field)``
    still says so (a few times; then the next round). Returns whether it was written and the version
    to guard the next write with."""
    entry_id, raw, payload = job
    for _ in range(WRITE_TRIES):
        write = view.batch()
        write.require_equal(keys.entry(entry_id), raw)  # exactly the text embedded
        if version is None:
            write.require_missing(keys.version)
        else:
            write.require_equal(keys.version, version)
        write.hset(keys.vectors, {entry_id: payload})
        log_change(write, keys, "vec", entry_id)
        if write.execute().applied:
            return True, str(int(version or 0) + 1)  # this write's own step
        check = view.batch()
        check.get(keys.entry(entry_id))
        check.hget(keys.vectors, entry_id)
        check.get(keys.version)
        now_raw, current, version = check.execute().results
        if now_raw != raw or not wanted(entry_id, now_raw, current):
            return False, version
    return False, version
