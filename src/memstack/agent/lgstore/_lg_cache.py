"""The in-process cache of one LangGraph namespace: a :class:`~memstack.index.mirror.Mirror`.

The index kit keeps it fresh from the namespace's change log, as it keeps long-term memory's scope
caches: each process holds, per (engine identity, namespace), the decoded records, the items'
vectors (a :class:`~memstack.index.vectors.VectorIndex` per dimension), and a BM25 index built on
the first query that needs one. A read never writes.

Items that expire (engine TTL) are not logged; the cache knows each record's expire-at and
leaves expired items out (:meth:`NamespaceCache.live`). A TTL refresh is a logged write.

The namespace registry is kept the same way (:class:`NamespaceList`): its version and epoch are read
in one call, the two sets only when a registration happened since.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...engines import Engine
from ...index import codec, registry
from ...index.mirror import Mirror, Row, Seen, decoded
from ...index.vectors import VectorIndex
from ...search import Bm25Index
from ._lg_layout import Record, RegistryKeys, decode_record
from ._lg_query import text_of

__all__ = [
    "Cached",
    "NamespaceCache",
    "NamespaceList",
    "clear_caches",
    "namespace_cache",
    "namespace_list",
    "namespaces",
]


@dataclass(frozen=True, slots=True)
class Cached:
    """One cached item: its stored text (the guard of a TTL refresh) and its decoded record."""

    raw: str
    record: Record


class NamespaceCache(Mirror):
    """Records, vectors and (on demand) the BM25 index of one namespace."""

    vector_hash = "vectors"

    def __init__(self, profile: str) -> None:
        super().__init__()
        self.profile = profile
        self.items: dict[str, Cached] = {}
        self.vectors: dict[int, VectorIndex] = {}  # by dimension
        self._index: Bm25Index | None = None
        # Keys whose text the index has not taken yet, in the order it would have: puts only
        # record them, the next query search indexes them (a put's own cost stays small).
        self._unindexed: dict[str, None] = {}
        self.derived: dict[object, object] = {}  # order, filter results: cleared on every change

    def reset(self) -> None:
        self.items, self.vectors, self.derived = {}, {}, {}
        self._index, self._unindexed = None, {}

    def take(self, rows: Sequence[Row]) -> None:
        for key, raw, payload in rows:
            old = self.items.get(key)
            if old is not None and old.raw == raw:
                continue
            self.derived = {}
            record = decoded(decode_record, raw, f"LangGraph item {key!r}")
            if record is None or raw is None:
                self.items.pop(key, None)
                self._drop_vectors(key)
                self._reindex(key)
                continue
            stored = codec.decode(payload) if payload is not None and record.vectors else None
            self._store(key, Cached(raw, record), None if stored is None else stored.rows)
        self.size = len(self.items)

    def vector_bytes(self) -> int:
        return sum(v.nbytes for v in self.vectors.values())

    @property
    def index(self) -> Bm25Index:
        """The BM25 index of every cached item's text (caller holds :attr:`lock`)."""
        if self._index is None:
            self._index, self._unindexed = Bm25Index(profile=self.profile), dict.fromkeys(self._order())
        if self._unindexed:
            for key in self._unindexed:
                self._index.remove(key)
                cached = self.items.get(key)
                if cached is not None:
                    self._index.add(key, text_of(cached.record.value))
            self._unindexed = {}
        return self._index

    # -- this process's own writes -------------------------------------------------------------
    def guardable(self) -> bool:
        """True if a put may trust this cache instead of reading first (caller holds :attr:`lock`).

        The put then guards on the namespace's epoch and version: equal, nothing changed since the
        cache was filled. Not for a cold cache, nor for a namespace holding items with a TTL: they
        expire without a logged change, so the cache cannot vouch for what is live.
        """
        return self.fresh and not self.expiring()

    def wrote(self, version: int, epoch: str, key: str, cached: Cached, vectors: codec.Matrix | None) -> None:
        """Take this process's own put of ``key``, which a guard proved was the namespace's only
        change since the cache's version (caller holds :attr:`lock`)."""
        self.derived = {"expiring": cached.record.expires_ms is not None}  # it was False before
        self.epoch, self.version = epoch, version
        self._store(key, cached, vectors)
        self.size = len(self.items)

    def _store(self, key: str, cached: Cached, vectors: codec.Matrix | None) -> None:
        old = self.items.get(key)
        self.items[key] = cached
        self._drop_vectors(key)
        if vectors is not None and len(vectors):
            dims = int(vectors.shape[1])
            index = self.vectors.get(dims)
            if index is None:
                index = self.vectors[dims] = VectorIndex(dims)
            index.add(key, vectors)
        if self._index is not None and (
            old is None or text_of(old.record.value) != text_of(cached.record.value)
        ):
            self._reindex(key)

    def _drop_vectors(self, key: str) -> None:
        for index in self.vectors.values():
            index.remove(key)

    def _reindex(self, key: str) -> None:
        if self._index is None:
            return
        self._unindexed.pop(key, None)  # last in the order, as removing and adding at once would
        self._unindexed[key] = None

    # -- views -------------------------------------------------------------------------------
    def live(self, now_ms: int, keys: list[str] | None = None) -> list[str]:
        """Live keys in first-insertion order (expired items left out), of ``keys`` when given
        (in that order)."""
        order = self._order() if keys is None else keys
        if not self.expiring():
            return order
        return [k for k in order if _alive(self.items[k].record, now_ms)]

    def expiring(self) -> bool:
        """True if some cached item has a TTL (kept until the next change)."""
        expiring = self.derived.get("expiring")
        if expiring is None:
            expiring = self.derived["expiring"] = any(
                c.record.expires_ms is not None for c in self.items.values()
            )
        return bool(expiring)

    def passing(self, marker: object, test: Callable[[str, Cached], bool]) -> list[str]:
        """The keys passing ``test``, in first-insertion order, kept under ``marker`` until the
        next change (a search's filter)."""
        found = self.derived.get(marker)
        if found is None:
            items = self.items
            found = self.derived[marker] = [k for k in self._order() if test(k, items[k])]
        assert isinstance(found, list)
        return found

    def _order(self) -> list[str]:
        """Every cached key in first-insertion order (kept until the next change)."""
        order = self.derived.get("order")
        if order is None:
            order = self.derived["order"] = sorted(self.items, key=lambda k: (self.items[k].record.seq, k))
        assert isinstance(order, list)
        return order

    def position(self) -> dict[str, int]:
        """Key -> its place in first-insertion order (kept until the next change)."""
        found = self.derived.get("position")
        if found is None:
            found = self.derived["position"] = {k: n for n, k in enumerate(self._order())}
        assert isinstance(found, dict)
        return found


def _alive(record: Record, now_ms: int) -> bool:
    return record.expires_ms is None or now_ms < record.expires_ms


def namespace_cache(engine: Engine, code: str, profile: str) -> NamespaceCache:
    """The process-wide cache of namespace ``code`` on ``engine`` (shared by every store on it)."""
    return registry.mirror(
        ("langgraph", engine.identity, code, profile), lambda: NamespaceCache(profile), NamespaceCache
    )


class NamespaceList(Mirror):
    """The namespace registry of one engine: every namespace that ever held an item, and those that
    ever held one with a TTL, as of ``version`` under ``epoch`` (:meth:`update`)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: frozenset[str] = frozenset()
        self.ttls: frozenset[str] = frozenset()

    def reset(self) -> None:
        self.names, self.ttls = frozenset(), frozenset()

    def take(self, rows: Sequence[Row]) -> None:
        raise NotImplementedError("the registry is read whole by update()")

    def update(self, engine: Engine, seen: Seen | None = None) -> tuple[frozenset[str], frozenset[str]]:
        """``(names, ttls)`` as of now: one read when no registration happened since the last
        (none when the caller read the registry's ``(version, epoch)`` just now: ``seen``)."""
        keys = RegistryKeys.of(engine)
        raw_version, epoch = engine.mget([keys.version, keys.epoch]) if seen is None else seen
        with self.lock:
            if self.epoch == epoch and self.version == int(raw_version or 0):
                return self.names, self.ttls
        batch = engine.batch()
        batch.get(keys.version)
        batch.get(keys.epoch)
        batch.smembers(keys.names)
        batch.smembers(keys.ttls)
        result = batch.execute()
        with self.lock:
            self.epoch, self.version = result[1], int(result[0] or 0)
            self.names, self.ttls = frozenset(result[2]), frozenset(result[3])
            self.size = len(self.names)
            return self.names, self.ttls


def namespace_list(engine: Engine) -> NamespaceList:
    """The process-wide registry mirror of ``engine``."""
    return registry.mirror(("langgraph", engine.identity, "~names"), NamespaceList, NamespaceList)


def namespaces(engine: Engine) -> tuple[frozenset[str], frozenset[str]]:
    """``(namespaces ever used, those that ever held a TTL item)`` on ``engine``."""
    return namespace_list(engine).update(engine)


def clear_caches() -> None:
    """Forget every cached namespace (tests simulate another process with it)."""
    registry.clear("langgraph")
