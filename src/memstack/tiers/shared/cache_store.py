"""The engine I/O of one semantic cache: its keys, atomic writes, the live lookup, statistics.

Layout, from the keyspace registry (``T`` = ``engine.tag(name)``)::

    shared:c:T:e:{id}   string  {"query", "response", "metadata", "vector": base64 float32,
                                 "model": model id, "dim": n, "created": ms (+ "subject")}
                                 (TTL when given)                                   cache.entry
    shared:c:T:stats    hash    hits, misses                                        cache.stats
    shared:c:T:exp      zset    entry id -> expiry time in ms (1e18: never), so that ``stats``
                                counts live entries without reading them             cache.expiry
    shared:c:T:ver/log/epoch/ids  the change log of :mod:`memstack.index.changelog`    cache.*

Searching never decodes the stored entries: each process keeps the vectors of one model in an
in-process :class:`~memstack.index.vectors.VectorIndex`, kept fresh by the change counter (one read
per lookup when nothing changed). A candidate is returned only after its entry is read back, which
also proves it is still stored: an expired entry is never a hit (and is dropped from every
process's index).
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from ...engines import Engine
from ...foundation.keyspace import KeyUnder, family_named, label_of, register
from ...foundation.keyspace.families import CACHE
from ...index import SetKeys, registry
from ...index.codec import Matrix as Vector
from .cache_index import CacheMirror

__all__ = ["CacheEntries"]

NEVER: Final = 1e18
"""The expiry score of an entry without TTL."""
_ENTRY: Final = family_named("cache.entry").tail_prefix
_CHUNK: Final = 1000


class CacheEntries:
    """The stored entries of the cache ``name`` on ``engine``."""

    entry = KeyUnder("cache.entry", prefix=True)
    stats_key = KeyUnder("cache.stats")
    expiry = KeyUnder("cache.expiry")

    def __init__(self, engine: Engine, name: str) -> None:
        self.engine = engine
        self.name = name
        self.base = CACHE.render(engine.tag, board=name)
        self.log = SetKeys(self.base, _ENTRY)

    def _mirror(self, model: str, dim: int) -> CacheMirror:
        key = ("cache", self.engine.identity, self.log.base, model, str(dim))
        return registry.mirror(key, lambda: CacheMirror(model, dim), CacheMirror)

    def _ranked(
        self, model: str, dim: int, vector: Vector, k: int | None, least: float
    ) -> list[tuple[str, float]]:
        mirror = self._mirror(model, dim)
        with mirror.lock:
            mirror.refresh(self.engine, self.log)
            return mirror.index.top(vector, k, least)

    def live(self, model: str, dim: int, vector: Vector, least: float, limit: int) -> list[dict[str, Any]]:
        """The best ``limit`` entries of ``model`` still stored with similarity >= ``least``, each
        with ``id`` and ``similarity``; entries found expired are dropped everywhere."""
        out: list[dict[str, Any]] = []
        stale: list[str] = []
        want = limit + 4
        while True:
            candidates = self._ranked(model, dim, vector, want, least)
            todo = [(i, s) for i, s in candidates if i not in stale and all(e["id"] != i for e in out)]
            raws = self.engine.mget([self.entry + i for i, _ in todo]) if todo else []
            for (entry_id, sim), raw in zip(todo, raws, strict=True):
                if raw is None:
                    stale.append(entry_id)
                    continue
                entry = json.loads(raw)
                out.append(
                    {
                        "id": entry_id,
                        "query": entry["query"],
                        "response": entry["response"],
                        "similarity": sim,
                        "metadata": entry.get("metadata") or {},
                    }
                )
            if len(out) >= limit or len(candidates) < want:
                break
            want *= 4  # expired entries took places: look further
        if stale:
            with self.engine.batch() as batch:
                self.log.record(batch, "del", stale)
                batch.zrem(self.expiry, *stale)
        out.sort(key=lambda e: -e["similarity"])
        return out[:limit]

    def count(self, hit: bool) -> None:
        """Count one hit or one miss."""
        self.engine.hincr(self.stats_key, "hits" if hit else "misses")

    def put(self, entry_id: str, text: str, px: int | None, *, miss: bool, subject: str | None) -> None:
        """Store one entry (its JSON ``text``, with its label) and its expiry in one batch."""
        with self.engine.batch() as batch:
            register(self.engine, batch, subject, "cache", self.name, entry_id)
            batch.set(self.entry + entry_id, text, px=px)
            self.log.record(batch, "put", [entry_id])
            batch.zadd(self.expiry, {entry_id: NEVER if px is None else self.engine.now_ms() + px})
            if miss:
                batch.hincr(self.stats_key, "misses")

    def remove(self, ids: list[str]) -> int:
        """Delete the entries ``ids``; returns how many were asked for."""
        if not ids:
            return 0
        with self.engine.batch() as batch:
            batch.delete(*[self.entry + i for i in ids])
            self.log.record(batch, "del", ids)
            batch.zrem(self.expiry, *ids)
        return len(ids)

    def remove_owned(self, ids: list[str], subject: str) -> int:
        """Delete those of ``ids`` whose entry is labelled ``subject``; returns how many."""
        raws = self.engine.mget([self.entry + i for i in ids]) if ids else []
        owned = [
            i
            for i, raw in zip(ids, raws, strict=True)
            if raw is not None and label_of(json.loads(raw)) == subject
        ]
        return self.remove(owned)

    def clear(self) -> None:
        """Delete every entry and reset the hit and miss counters."""
        ids = sorted(self.engine.smembers(self.log.ids))
        for start in range(0, len(ids), _CHUNK):
            self.engine.delete(*[self.entry + i for i in ids[start : start + _CHUNK]])
        with self.engine.batch() as batch:
            batch.delete(self.stats_key, self.expiry)
            self.log.restart(batch)

    def stats(self) -> dict[str, Any]:
        """``{hits, misses, hit_rate (0.0 when none), entries}`` (live entries only)."""
        with self.engine.batch() as read:
            read.hgetall(self.stats_key)
            read.scard(self.log.ids)
            read.zcard(self.expiry)
            read.zrangebyscore(self.expiry, -math.inf, self.engine.now_ms())
        assert read.result is not None
        counts, stored, timed, expired = read.result.results
        # Entries written without expiry times (the layout before it) are read one by one.
        live = stored - len(expired) if stored == timed else self._live_count()
        hits, misses = int(counts.get("hits", 0)), int(counts.get("misses", 0))
        total = hits + misses
        return {"hits": hits, "misses": misses, "hit_rate": hits / total if total else 0.0, "entries": live}

    def _live_count(self) -> int:
        ids = sorted(self.engine.smembers(self.log.ids))
        live = 0
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            live += sum(raw is not None for raw in self.engine.mget([self.entry + i for i in chunk]))
        return live
