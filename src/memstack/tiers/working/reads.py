"""The reads of working memory: one entry, listings across namespaces, search.

A mixin of :class:`~memstack.tiers.working.store.WorkingMemory` (reads may cross namespaces; writes stay
in the bound one), kept apart so that each file holds one concept.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence

from ...engines.base import Engine
from . import keys as wkeys
from .entry import WorkingEntry, category_matches, decode_meta, document_text, tags_match
from .layout import NamespaceKeys, RegistryKeys
from .requests import SearchEntries

__all__ = ["WorkingReads", "expiry"]


class WorkingReads:
    """``get``, ``list``, ``list_many`` and ``search`` of a working memory bound to ``namespace``."""

    engine: Engine
    namespace: str
    _registry: RegistryKeys

    def get(self, key: str) -> WorkingEntry | None:
        """The live entry at ``key`` (plain → own namespace, full path → any), else None.

        Raises:
            InvalidKey: an ill-formed key.
        """
        full = wkeys.resolve_read(self.namespace, key)
        keys = NamespaceKeys.of(self.engine, wkeys.namespace_of(full))
        with self.engine.batch() as batch:
            batch.hget(keys.meta, full)
            batch.hget(keys.data, full)
        assert batch.result is not None
        meta, value = batch.result[0], batch.result[1]
        if meta is None or value is None or expiry(meta) <= self.engine.now_ms():
            return None
        return decode_meta(full, meta, value)

    def list(self, prefix: str | None = None, *, with_values: bool = True) -> builtins.list[WorkingEntry]:
        """Live entries under ``prefix`` by whole segments, ordered by key.

        ``prefix`` None means the own namespace; ``""`` means every namespace; ``patrol`` means
        every ``patrol/…`` namespace; ``session/s1`` never includes ``session/s10/…``. With
        ``with_values=False`` only metadata is read (``value`` is None): what inventories need.

        Raises:
            InvalidKey: an ill-formed prefix.
        """
        return self.list_many([prefix], with_values=with_values)[0]

    def list_many(
        self, prefixes: Sequence[str | None], *, with_values: bool = True
    ) -> builtins.list[builtins.list[WorkingEntry]]:
        """:meth:`list` for several prefixes at once, in as few round trips as the engine allows
        (two on a non-clustered engine: the registry, then every namespace involved).

        Raises:
            InvalidKey: an ill-formed prefix.
        """
        targets = [self.namespace if p is None else wkeys.normalize_prefix(p) for p in prefixes]
        spaces = self._namespaces_under(targets)
        needed = sorted({ns for group in spaces for ns in group})
        read = {ns: (metas, values) for ns, metas, values in self._read_namespaces(needed, with_values)}
        now = self.engine.now_ms()
        results: builtins.list[builtins.list[WorkingEntry]] = []
        for target, group in zip(targets, spaces, strict=True):
            found: builtins.list[WorkingEntry] = []
            for namespace in group:
                metas, values = read[namespace]
                if not metas:  # an emptied namespace: skipped here, unregistered by prune()
                    continue
                for key, meta in metas.items():
                    if not wkeys.covers(target, key):
                        continue
                    data = json.loads(meta)
                    if data["e"] <= now:
                        continue
                    value = values.get(key) if values is not None else None
                    if values is not None and value is None:
                        continue  # a write racing this read: meta landed, value read before it
                    found.append(decode_meta(key, data, value))
            found.sort(key=lambda e: e.key)
            results.append(found)
        return results

    def _namespaces_under(self, targets: Sequence[str]) -> builtins.list[builtins.list[str]]:
        # Registry sets share one tag, so every lookup fits one batch (two for "" : tops first).
        tops = sorted({t for t in targets if t and "/" not in t})
        everything = "" in targets
        members: dict[str, builtins.set[str]] = {}
        if tops or everything:
            with self.engine.batch() as batch:
                for top in tops:
                    batch.smembers(self._registry.namespaces(top))
                if everything:
                    batch.smembers(self._registry.tops)
            assert batch.result is not None
            members = dict(zip(tops, batch.result.results, strict=False))
            if everything:
                all_tops = sorted(batch.result.results[-1])
                missing = [t for t in all_tops if t not in members]
                if missing:
                    with self.engine.batch() as more:
                        for top in missing:
                            more.smembers(self._registry.namespaces(top))
                    assert more.result is not None
                    members.update(zip(missing, more.result.results, strict=True))
                members[""] = {ns for top in all_tops for ns in members.get(top, ())}
        return [[wkeys.namespace_of(t)] if "/" in t else sorted(members.get(t, ())) for t in targets]

    def _read_namespaces(
        self, namespaces: Sequence[str], with_values: bool
    ) -> builtins.list[tuple[str, dict[str, str], dict[str, str] | None]]:
        # One round trip for all namespaces where the engine allows it; one per slot in a cluster.
        groups = [[ns] for ns in namespaces] if self.engine.clustered else [list(namespaces)]
        out: builtins.list[tuple[str, dict[str, str], dict[str, str] | None]] = []
        for group in groups:
            if not group:
                continue
            with self.engine.batch() as batch:
                for ns in group:
                    keys = NamespaceKeys.of(self.engine, ns)
                    batch.hgetall(keys.meta)
                    if with_values:
                        batch.hgetall(keys.data)
            assert batch.result is not None
            step = 2 if with_values else 1
            for i, ns in enumerate(group):
                metas = batch.result[i * step]
                values = batch.result[i * step + 1] if with_values else None
                out.append((ns, metas, values))
        return out

    def search(
        self,
        query: str | None = None,
        category: str | None = None,
        tags: Sequence[str] | None = None,
        prefix: str | None = None,
        max_results: int = 20,
    ) -> builtins.list[WorkingEntry]:
        """Live entries under ``prefix`` (as :meth:`list`) that pass the filters, best first.

        Filters: ``category`` exact or a sub-path, case-insensitive; every tag of
        ``tags`` present. A blank or None ``query`` orders by store time, newest first; otherwise
        BM25 over key, value, tags and category, zero scores dropped.

        Raises:
            InvalidKey: an ill-formed prefix.
            InvalidValue: ``max_results`` not an int >= 1, bad tags, a ``query`` or ``category``
                that is not a string (or None) or holds a lone surrogate.
        """
        request = SearchEntries.of(
            query=query, category=category, tags=tags, prefix=prefix, max_results=max_results
        )
        return self.find(request)

    def find(self, request: SearchEntries) -> builtins.list[WorkingEntry]:
        """:meth:`search` with a request already checked (:meth:`SearchEntries.of`)."""
        category, wanted_tags = request.category, request.tags
        candidates = [
            e
            for e in self.list(request.prefix)
            if (category is None or category_matches(category, e.category))
            and tags_match(wanted_tags, e.tags)
        ]
        query = request.query
        if query is None or not query.strip():
            candidates.sort(key=lambda e: (-e.stored_at, e.key))
            return candidates[: request.max_results]
        return _rank(query, candidates)[: request.max_results]


def _rank(query: str, entries: builtins.list[WorkingEntry]) -> builtins.list[WorkingEntry]:
    from ...search import Bm25Index

    index = Bm25Index()
    by_key = {}
    for entry in entries:
        index.add(entry.key, document_text(entry))
        by_key[entry.key] = entry
    return [by_key[key] for key, _score in index.search(query)]


def expiry(meta: str) -> int:
    """The expiry time (engine ms) in an entry's stored meta."""
    return int(json.loads(meta)["e"])
