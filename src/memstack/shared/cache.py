"""``SemanticCache``: answers to earlier queries, found again by embedding similarity.

Entries live on the engine, so every process using the same cache name shares them. Layout
(``T`` = ``engine.tag(name)``)::

    shared:c:T:e:{id}   string  {"query", "response", "metadata", "vector": base64 float32,
                                 "model": model id, "dim": n, "created": ms}   (TTL when given)
    shared:c:T:ids      set     ids of stored entries (pruned lazily when an entry expired)
    shared:c:T:stats    hash    hits, misses

Only entries embedded with the cache's own model id and dimension are compared; entries of
another model are ignored, never compared across models. Vectors are kept in an in-process
map by id (entries never change once stored), so a lookup reads only new ids and the entries it
returns, which also proves they are still stored (an expired entry is never a hit).
"""

from __future__ import annotations

import base64
import json
import threading
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..engines import Engine
from ..errors import InvalidConfiguration, InvalidInput
from ..search.embedders import Embedder, FakeEmbedder
from .serialize import check_name, check_value, dumps

__all__ = ["SemanticCache", "default_embedder"]

Vector = npt.NDArray[np.float32]


def default_embedder() -> Embedder:
    """The embedder a shared memory's cache uses when none is given.

    memstack ships no model here, so this is the deterministic hashed bag-of-terms embedder
    (dimension 256): it matches near-identical queries (case, punctuation, inflection, word
    order), not paraphrases. Pass ``embedder=`` for real semantic matching.
    """
    return FakeEmbedder(dim=256)


def _check_threshold(threshold: object) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
        raise InvalidConfiguration(f"threshold {threshold!r}: must be a number in [0, 1]")
    return float(threshold)


def _ttl_ms(ttl: object) -> int | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0:
        raise InvalidConfiguration(f"ttl {ttl!r}: must be a number of seconds > 0 or None")
    return max(1, int(ttl * 1000))


class SemanticCache:
    """A semantic cache named ``name`` on ``engine``.

    Args:
        engine: where entries live.
        name: 1-128 characters of ``[A-Za-z0-9_.-]``.
        embedder: turns queries into unit vectors.
        threshold: least cosine similarity for a hit (0..1).
        ttl: default lifetime of stored entries in seconds (None: forever).

    Raises:
        InvalidConfiguration: threshold outside [0, 1], or ttl not > 0.
        InvalidKey: a bad name.
    """

    def __init__(
        self,
        engine: Engine,
        name: str,
        *,
        embedder: Embedder,
        threshold: float = 0.92,
        ttl: float | None = None,
    ) -> None:
        self.engine = engine
        self.name = check_name(name, "cache name")
        self.embedder = embedder
        self.threshold = _check_threshold(threshold)
        self.ttl = ttl
        self._ttl_ms = _ttl_ms(ttl)
        base = f"shared:c:{engine.tag(name)}:"
        self._entry = base + "e:"
        self._ids = base + "ids"
        self._stats = base + "stats"
        self._vectors: dict[str, Vector] = {}
        self._foreign: set[str] = set()  # ids embedded by another model: never compared
        self._lock = threading.Lock()

    # -- embedding and lookup ----------------------------------------------------------------
    def _embed(self, query: str) -> Vector:
        if not isinstance(query, str):
            raise InvalidInput(f"query {query!r}: must be a str")
        vector: Vector = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        return vector

    def _refresh(self) -> tuple[list[str], Vector]:
        """Ids and vector matrix of every stored entry of this cache's model."""
        ids = self.engine.smembers(self._ids)
        with self._lock:
            new = [i for i in ids if i not in self._vectors and i not in self._foreign]
        if new:
            raws = self.engine.mget([self._entry + i for i in new])
            with self._lock:
                for entry_id, raw in zip(new, raws, strict=True):
                    if raw is None:
                        continue  # expired or deleted; pruned when met by _entries
                    entry = json.loads(raw)
                    if entry.get("model") != self.embedder.model_id or entry.get("dim") != self.embedder.dim:
                        self._foreign.add(entry_id)
                        continue
                    self._vectors[entry_id] = np.frombuffer(
                        base64.b64decode(entry["vector"]), dtype=np.float32
                    )
        with self._lock:
            for gone in set(self._vectors) - ids:
                del self._vectors[gone]
            self._foreign &= ids
            order = sorted(self._vectors)
            matrix = (
                np.stack([self._vectors[i] for i in order])
                if order
                else np.zeros((0, self.embedder.dim), dtype=np.float32)
            )
        return order, matrix

    def _ranked(self, vector: Vector) -> list[tuple[str, float]]:
        """Every candidate id with its cosine similarity, best first."""
        order, matrix = self._refresh()
        if not order:
            return []
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            return []
        sims = (matrix @ vector) / (np.linalg.norm(matrix, axis=1) * norm + 1e-12)
        ranked = np.argsort(-sims, kind="stable")
        return [(order[i], float(sims[i])) for i in ranked]

    def _entries(self, candidates: list[tuple[str, float]], limit: int) -> list[dict[str, Any]]:
        """The first ``limit`` candidates still stored, each with ``id`` and ``similarity``."""
        out: list[dict[str, Any]] = []
        stale: list[str] = []
        step = max(limit, 16)
        for start in range(0, len(candidates), step):
            chunk = candidates[start : start + step]
            raws = self.engine.mget([self._entry + i for i, _ in chunk])
            for (entry_id, sim), raw in zip(chunk, raws, strict=True):
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
                if len(out) == limit:
                    break
            if len(out) == limit:
                break
        if stale:
            self.engine.srem(self._ids, *stale)
        return out

    def _matches(self, query: str, threshold: float | None, limit: int) -> list[dict[str, Any]]:
        least = self.threshold if threshold is None else _check_threshold(threshold)
        ranked = [(i, s) for i, s in self._ranked(self._embed(query)) if s >= least]
        return self._entries(ranked, limit)

    # -- API ---------------------------------------------------------------------------------
    def fetch(
        self,
        query: str,
        compute: Callable[[], Any],
        *,
        threshold: float | None = None,
        ttl: float | None = None,
    ) -> Any:
        """The cached response of the nearest stored query when similar enough (a hit), else
        ``compute()``, stored under ``query`` and returned (a miss).

        Raises:
            InvalidInput: ``query`` is not a str. InvalidValue: the computed response is not JSON.
        """
        vector = self._embed(query)
        least = self.threshold if threshold is None else _check_threshold(threshold)
        ranked = [(i, s) for i, s in self._ranked(vector) if s >= least]
        hit = self._entries(ranked, 1)
        if hit:
            self.engine.hincr(self._stats, "hits")
            return hit[0]["response"]
        self.engine.hincr(self._stats, "misses")
        response = compute()
        self._put(query, response, None, ttl, vector)
        return response

    def store(
        self, query: str, response: Any, metadata: dict[str, Any] | None = None, ttl: float | None = None
    ) -> str:
        """Store ``response`` for ``query``; returns the new entry id.

        Raises:
            InvalidValue: response or metadata not JSON. InvalidConfiguration: bad ttl.
        """
        return self._put(query, response, metadata, ttl, self._embed(query))

    def _put(
        self, query: str, response: Any, metadata: dict[str, Any] | None, ttl: float | None, vector: Vector
    ) -> str:
        check_value(response, "response")
        check_value(metadata or {}, "metadata")
        px = self._ttl_ms if ttl is None else _ttl_ms(ttl)
        entry_id = uuid.uuid4().hex
        text = dumps(
            {
                "query": query,
                "response": response,
                "metadata": metadata or {},
                "vector": base64.b64encode(np.ascontiguousarray(vector, dtype=np.float32).tobytes()).decode(),
                "model": self.embedder.model_id,
                "dim": self.embedder.dim,
                "created": self.engine.now_ms(),
            }
        )
        with self.engine.batch() as batch:
            batch.set(self._entry + entry_id, text, px=px)
            batch.sadd(self._ids, entry_id)
        return entry_id

    def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Up to ``limit`` stored entries, best first: ``{id, query, response, similarity, metadata}``."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput(f"limit {limit!r}: must be an int >= 1")
        return self._entries(self._ranked(self._embed(query)), limit)

    def exists(self, query: str, *, threshold: float | None = None) -> bool:
        """True if a stored query is similar enough to ``query``."""
        return bool(self._matches(query, threshold, 1))

    def delete(self, query: str, *, threshold: float | None = None) -> bool:
        """Delete the nearest entry if similar enough; True if one was deleted."""
        return self._remove(self._matches(query, threshold, 1)) > 0

    def invalidate(self, query: str, *, threshold: float | None = None, limit: int = 100) -> int:
        """Delete up to ``limit`` entries similar enough to ``query``; returns how many."""
        return self._remove(self._matches(query, threshold, limit))

    def _remove(self, entries: list[dict[str, Any]]) -> int:
        if not entries:
            return 0
        ids = [e["id"] for e in entries]
        with self.engine.batch() as batch:
            batch.delete(*[self._entry + i for i in ids])
            batch.srem(self._ids, *ids)
        return len(ids)

    def clear(self) -> None:
        """Delete every entry (hit and miss counters stay)."""
        ids = list(self.engine.smembers(self._ids))
        with self.engine.batch() as batch:
            if ids:
                batch.delete(*[self._entry + i for i in ids])
            batch.delete(self._ids)

    def stats(self) -> dict[str, Any]:
        """``{hits, misses, hit_rate (0.0 when none), entries}`` (live entries only)."""
        counts = self.engine.hgetall(self._stats)
        hits, misses = int(counts.get("hits", 0)), int(counts.get("misses", 0))
        ids = sorted(self.engine.smembers(self._ids))
        live = self.engine.mget([self._entry + i for i in ids]) if ids else []
        total = hits + misses
        return {
            "hits": hits,
            "misses": misses,
            "hit_rate": hits / total if total else 0.0,
            "entries": sum(raw is not None for raw in live),
        }

    def __repr__(self) -> str:
        return f"<SemanticCache {self.name!r} model={self.embedder.model_id!r} threshold={self.threshold}>"
