"""``WorkingMemory``: path-keyed scratch entries with per-entry TTL and a cap per namespace.

Storage layout (tier prefix ``wm:``; ``T`` = ``engine.tag(namespace)`` so one namespace is one
Redis Cluster slot):

* ``wm:T:m`` hash: full key → meta JSON (expiry ms, store time ms, category, tags);
* ``wm:T:d`` hash: full key → value JSON;
* ``wm:T:v`` string: the namespace version, a fresh random token on every write;
* ``wm:R:ns:{top}`` set (``R`` = ``engine.tag("wm")``): the namespaces under a top segment, and
  ``wm:R:tops`` the top segments, so listings across namespaces need no key scan. Updated in
  the write's batch (on a cluster, where it is another slot, just before and after it); a
  namespace found empty by a listing is dropped from it, then re-added if a write raced in.

A write reads the version and the metas, checks the cap against the entries live at that moment,
and commits in ONE batch guarded by ``require_equal(version)``: if any other writer committed in
between, nothing is applied and the write retries with fresh data. So the cap holds under
concurrent writers in any number of processes, on every engine. Expired fields are pruned by the
next write; the namespace's keys carry an engine TTL equal to their latest expiry, so an abandoned
namespace disappears by itself. Expiry of an entry is exact: it is live while
``engine.now_ms() < expires``, the same rule the engines use for keys.
"""

from __future__ import annotations

import builtins
import json
import random
import time
import uuid
from collections.abc import Sequence
from typing import Any, Final

from .. import limits
from ..engines.base import Engine
from ..errors import Conflict, InvalidValue, NamespaceFull
from ..forget.subjects import check_subject, register
from ..limits import short_repr
from . import keys as wkeys
from .entry import (
    WorkingEntry,
    category_matches,
    check_category,
    check_tags,
    check_ttl,
    decode_meta,
    document_text,
    dump_value,
    encode_meta,
    tags_match,
)

__all__ = ["DEFAULT_MAX_ENTRIES", "DEFAULT_MAX_VALUE_BYTES", "DEFAULT_TTL", "WorkingMemory"]

DEFAULT_TTL: Final = 300.0
"""Seconds an entry lives when ``set`` gets no ``ttl`` (the seed's 5 minutes)."""
DEFAULT_MAX_ENTRIES: Final = 50
"""Live entries one namespace may hold (the seed's ``MaxEntriesPerNamespace``)."""
DEFAULT_MAX_VALUE_BYTES: Final = 1 << 20
"""Largest value (its UTF-8 JSON text) one entry may hold: 1 MiB, for chunked tool results."""
MAX_WRITE_ATTEMPTS: Final = 200


class WorkingMemory:
    """Working memory bound to one namespace: writes go there, reads may cross namespaces.

    Args:
        engine: the storage engine (its clock drives expiry).
        namespace: two segments, e.g. ``session/abc``, ``patrol/heartbeat``, ``subagent/t1``.
        default_ttl: seconds an entry lives when ``set`` is given no ``ttl``.
        max_entries_per_namespace: the cap of live entries in one namespace.
        max_value_bytes: the largest value, as UTF-8 JSON text.

    Raises:
        InvalidKey: a namespace that is not two valid segments.
        InvalidValue: a non-positive ``default_ttl``, cap or value size.
    """

    def __init__(
        self,
        engine: Engine,
        namespace: str,
        *,
        default_ttl: float = DEFAULT_TTL,
        max_entries_per_namespace: int = DEFAULT_MAX_ENTRIES,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
    ) -> None:
        self.engine = engine
        self.namespace = wkeys.normalize_namespace(namespace)
        self._default_px = check_ttl(default_ttl)
        self.default_ttl = float(default_ttl)
        if (
            isinstance(max_entries_per_namespace, bool)
            or not isinstance(max_entries_per_namespace, int)
            or max_entries_per_namespace < 1
        ):
            raise InvalidValue(
                f"max_entries_per_namespace {short_repr(max_entries_per_namespace)}: "
                f"must be an int of at least 1"
            )
        self.max_entries = max_entries_per_namespace
        if isinstance(max_value_bytes, bool) or not isinstance(max_value_bytes, int) or max_value_bytes < 1:
            raise InvalidValue(f"max_value_bytes {short_repr(max_value_bytes)}: must be an int of at least 1")
        self.max_value_bytes = max_value_bytes
        self._registry = "wm:" + engine.tag("wm")

    # -- key layout ----------------------------------------------------------------------------
    def _keys(self, namespace: str) -> tuple[str, str, str]:
        base = "wm:" + self.engine.tag(namespace)
        return base + ":m", base + ":d", base + ":v"

    def _ns_set(self, top: str) -> str:
        return f"{self._registry}:ns:{top}"

    # -- writes --------------------------------------------------------------------------------
    def set(
        self,
        key: str,
        value: Any,
        ttl: float | None = None,
        category: str | None = None,
        tags: Sequence[str] | None = None,
        subject: str | None = None,
    ) -> WorkingEntry:
        """Store ``value`` under ``key`` (plain → ``{namespace}/{key}``) for ``ttl`` seconds;
        ``subject``: the end user it is about (:mod:`memstack.forget.subjects`).

        Overwriting a live key is always allowed; a new key needs room under the cap.

        Raises:
            InvalidKey: an ill-formed key, or a full path into another namespace.
            InvalidValue: a value that is not JSON or larger than ``max_value_bytes`` (see
                :mod:`memstack.limits`), a ``ttl`` not in (0, 10 years], bad tags; names the field.
            InvalidCategory: an ill-formed category path.
            NamespaceFull: the namespace already holds ``max_entries_per_namespace`` live entries.
            Conflict: the namespace kept changing under ``MAX_WRITE_ATTEMPTS`` tries.
        """
        full = wkeys.resolve_write(self.namespace, key)
        px = self._default_px if ttl is None else check_ttl(ttl)
        category = check_category(category)
        tag_list = check_tags(tags)
        if subject is not None:
            check_subject(subject)
        payload = dump_value(value, self.max_value_bytes)
        meta_key, data_key, version_key = self._keys(self.namespace)
        if self.engine.clustered:
            # The registry lives in another slot, so it cannot join the write's batch: register
            # before (a crash after the write still leaves it findable) and after (in case a
            # concurrent listing pruned it in between as empty).
            self._register()
        for attempt in range(MAX_WRITE_ATTEMPTS):
            with self.engine.batch() as read:
                read.get(version_key)
                read.hgetall(meta_key)
            assert read.result is not None
            version, metas = read.result[0], read.result[1]
            now = self.engine.now_ms()
            live = {k: e for k, e in ((k, _expiry(m)) for k, m in metas.items()) if e > now}
            if full not in live and len(live) >= self.max_entries:
                raise NamespaceFull(
                    f"working-memory namespace {short_repr(self.namespace)} "
                    f"is full: it holds {len(live)} live "
                    f"entries, the cap is {self.max_entries}; cannot add {short_repr(full)}"
                )
            expires = now + px
            live[full] = expires
            keep_ms = max(live.values()) - now
            stale = [k for k in metas if k not in live]
            batch = self.engine.batch()
            batch.require_equal(version_key, version)
            if stale:
                batch.hdel(meta_key, *stale)
                batch.hdel(data_key, *stale)
            batch.hset(meta_key, {full: encode_meta(expires, now, category, tag_list)})
            batch.hset(data_key, {full: payload})
            register(self.engine, batch, subject, "working", self.namespace, full)
            batch.set(version_key, uuid.uuid4().hex, px=keep_ms)
            batch.pexpire(meta_key, keep_ms)
            batch.pexpire(data_key, keep_ms)
            if not self.engine.clustered:
                self._queue_register(batch)
            if batch.execute().applied:
                if self.engine.clustered:
                    self._register()
                return WorkingEntry(full, _fresh(payload), now / 1000, expires / 1000, category, tag_list)
            if attempt >= 3:
                time.sleep(random.uniform(0, 0.002 * min(attempt, 20)))
        raise Conflict(
            f"working-memory namespace {short_repr(self.namespace)}: "
            f"{MAX_WRITE_ATTEMPTS} concurrent writes in a row "
            f"beat this one; giving up on {short_repr(full)}"
        )

    def _queue_register(self, batch: Any) -> None:
        top = wkeys.top_segment(self.namespace)
        batch.sadd(self._ns_set(top), self.namespace)
        batch.sadd(self._registry + ":tops", top)

    def _register(self) -> None:
        with self.engine.batch() as batch:
            self._queue_register(batch)

    def delete(self, key: str) -> bool:
        """Delete ``key`` from the own namespace; True if a live entry was removed.

        Raises:
            InvalidKey: an ill-formed key, or a full path into another namespace.
        """
        full = wkeys.resolve_write(self.namespace, key)
        meta_key, data_key, _ = self._keys(self.namespace)
        with self.engine.batch() as batch:
            batch.hget(meta_key, full)
            batch.hdel(meta_key, full)
            batch.hdel(data_key, full)
        assert batch.result is not None
        meta = batch.result[0]
        return meta is not None and _expiry(meta) > self.engine.now_ms()

    def clear(self, prefix: str | None = None) -> int:
        """Delete the own namespace's entries under ``prefix`` (None: all of them).

        Returns how many live entries were removed.

        Raises:
            InvalidKey: a prefix outside the own namespace.
        """
        target = self.namespace if prefix is None else wkeys.resolve_write(self.namespace, prefix)
        meta_key, data_key, version_key = self._keys(self.namespace)
        now = self.engine.now_ms()
        if target == self.namespace:
            with self.engine.batch() as batch:
                batch.hgetall(meta_key)
                batch.delete(meta_key, data_key, version_key)
            assert batch.result is not None
            removed = sum(1 for m in batch.result[0].values() if _expiry(m) > now)
            self._unregister_if_empty(self.namespace)
            return removed
        metas = self.engine.hgetall(meta_key)
        doomed = [k for k in metas if wkeys.covers(target, k)]
        if not doomed:
            return 0
        with self.engine.batch() as batch:
            batch.hdel(meta_key, *doomed)
            batch.hdel(data_key, *doomed)
        return sum(1 for k in doomed if _expiry(metas[k]) > now)

    def _unregister_if_empty(self, namespace: str) -> None:
        # Remove, then look again: a writer that committed in between re-registered before or
        # registers after, and the second look puts it back if its data landed first.
        ns_set = self._ns_set(wkeys.top_segment(namespace))
        self.engine.srem(ns_set, namespace)
        if self.engine.exists(self._keys(namespace)[0]):
            self.engine.sadd(ns_set, namespace)

    def prune(self) -> int:
        """Unregister every namespace whose entries all expired; returns how many (a write, run by
        the retention sweep: listings never write).

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """
        pruned = 0
        for top in sorted(self.engine.smembers(f"{self._registry}:tops")):
            for namespace in sorted(self.engine.smembers(self._ns_set(top))):
                if not self.engine.exists(self._keys(namespace)[0]):
                    self._unregister_if_empty(namespace)
                    pruned += 1
        return pruned

    # -- reads ---------------------------------------------------------------------------------
    def get(self, key: str) -> WorkingEntry | None:
        """The live entry at ``key`` (plain → own namespace, full path → any), else None.

        Raises:
            InvalidKey: an ill-formed key.
        """
        full = wkeys.resolve_read(self.namespace, key)
        meta_key, data_key, _ = self._keys(wkeys.namespace_of(full))
        with self.engine.batch() as batch:
            batch.hget(meta_key, full)
            batch.hget(data_key, full)
        assert batch.result is not None
        meta, value = batch.result[0], batch.result[1]
        if meta is None or value is None or _expiry(meta) <= self.engine.now_ms():
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
                    batch.smembers(self._ns_set(top))
                if everything:
                    batch.smembers(self._registry + ":tops")
            assert batch.result is not None
            members = dict(zip(tops, batch.result.results, strict=False))
            if everything:
                all_tops = sorted(batch.result.results[-1])
                missing = [t for t in all_tops if t not in members]
                if missing:
                    with self.engine.batch() as more:
                        for top in missing:
                            more.smembers(self._ns_set(top))
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
                    meta_key, data_key, _ = self._keys(ns)
                    batch.hgetall(meta_key)
                    if with_values:
                        batch.hgetall(data_key)
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

        Filters (spec item 46): ``category`` exact or a sub-path, case-insensitive; every tag of
        ``tags`` present. A blank or None ``query`` orders by store time, newest first; otherwise
        BM25 over key, value, tags and category, zero scores dropped.

        Raises:
            InvalidKey: an ill-formed prefix.
            InvalidValue: ``max_results`` not an int >= 1, bad tags, a ``query`` or ``category``
                that is not a string (or None) or holds a lone surrogate.
        """
        if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
            raise InvalidValue(f"max_results {short_repr(max_results)}: must be an int of at least 1")
        if query is not None:
            limits.check_text(query, "query")
        if category is not None:
            limits.check_text(category, "category")
        wanted_tags = check_tags(tags)
        candidates = [
            e
            for e in self.list(prefix)
            if (category is None or category_matches(category, e.category))
            and tags_match(wanted_tags, e.tags)
        ]
        if query is None or not query.strip():
            candidates.sort(key=lambda e: (-e.stored_at, e.key))
            return candidates[:max_results]
        return _rank(query, candidates)[:max_results]

    def __repr__(self) -> str:
        return f"<WorkingMemory {self.namespace!r} on {self.engine!r}>"


def _rank(query: str, entries: builtins.list[WorkingEntry]) -> builtins.list[WorkingEntry]:
    from ..search import Bm25Index

    index = Bm25Index()
    by_key = {}
    for entry in entries:
        index.add(entry.key, document_text(entry))
        by_key[entry.key] = entry
    return [by_key[key] for key, _score in index.search(query)]


def _expiry(meta: str) -> int:
    return int(json.loads(meta)["e"])


def _fresh(payload: str) -> Any:
    return json.loads(payload)
