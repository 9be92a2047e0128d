"""``WorkingMemory``: path-keyed scratch entries with per-entry TTL and a cap per namespace.

Storage layout: :mod:`memstack.tiers.working.layout` (one namespace is one Redis Cluster slot). The
registry of namespaces is updated in the write's batch (on a cluster, where it is another slot,
just before and after it); a namespace found empty by a listing is dropped from it, then re-added
if a write raced in.

A write reads the version and the metas, checks the cap against the entries live at that moment,
and commits in ONE batch guarded by ``require_equal(version)``: if any other writer committed in
between, nothing is applied and the write retries with fresh data. So the cap holds under
concurrent writers in any number of processes, on every engine. Expired fields are pruned by the
next write; the namespace's keys carry an engine TTL equal to their latest expiry, so an abandoned
namespace disappears by itself. Expiry of an entry is exact: it is live while
``engine.now_ms() < expires``, the same rule the engines use for keys. Reads: :mod:`.reads`.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Sequence
from typing import Any, Final

from ...engines.base import Engine
from ...foundation.errors import Conflict, InvalidValue, NamespaceFull
from ...foundation.keyspace import label_of, register
from ...foundation.limits import short_repr
from . import keys as wkeys
from .entry import WorkingEntry, check_ttl, dump_value, encode_meta
from .layout import NamespaceKeys, RegistryKeys
from .reads import WorkingReads, expiry
from .requests import SetEntry

__all__ = ["DEFAULT_MAX_ENTRIES", "DEFAULT_MAX_VALUE_BYTES", "DEFAULT_TTL", "WorkingMemory"]

DEFAULT_TTL: Final = 300.0
"""Seconds an entry lives when ``set`` gets no ``ttl`` (RockBot's 5 minutes)."""
DEFAULT_MAX_ENTRIES: Final = 50
"""Live entries one namespace may hold (RockBot's ``MaxEntriesPerNamespace``)."""
DEFAULT_MAX_VALUE_BYTES: Final = 1 << 20
"""Largest value (its UTF-8 JSON text) one entry may hold: 1 MiB, for chunked tool results."""
MAX_WRITE_ATTEMPTS: Final = 200


class WorkingMemory(WorkingReads):
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
        self._registry = RegistryKeys.of(engine)
        self.keys = NamespaceKeys.of(engine, self.namespace)

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
        ``subject``: the end user this version is about (:mod:`memstack.foundation.keyspace.subjects`).

        Overwriting a live key is always allowed; a new key needs room under the cap.

        Raises:
            InvalidKey: an ill-formed key, or a full path into another namespace.
            InvalidValue: a value that is not JSON or larger than ``max_value_bytes`` (see
                :mod:`memstack.foundation.limits`), a ``ttl`` not in (0, 10 years], bad tags or subject;
                names the field.
            InvalidCategory: an ill-formed category path.
            NamespaceFull: the namespace already holds ``max_entries_per_namespace`` live entries.
            Conflict: the namespace kept changing under ``MAX_WRITE_ATTEMPTS`` tries.
        """
        full = wkeys.resolve_write(self.namespace, key)
        request = SetEntry.of(key, value, ttl=ttl, category=category, tags=tags, subject=subject)
        return self._put(full, request)

    def put(self, request: SetEntry) -> WorkingEntry:
        """:meth:`set` with a request already checked (:meth:`SetEntry.of`).

        Raises:
            InvalidKey, InvalidValue, NamespaceFull, Conflict: as :meth:`set` says.
        """
        return self._put(wkeys.resolve_write(self.namespace, request.key), request)

    def _put(self, full: str, request: SetEntry) -> WorkingEntry:
        px = self._default_px if request.ttl_ms is None else request.ttl_ms
        category, tag_list, subject = request.category, request.tags, request.subject
        payload = dump_value(request.value, self.max_value_bytes)
        keys = self.keys
        if self.engine.clustered:
            # The registry lives in another slot, so it cannot join the write's batch: register
            # before (a crash after the write still leaves it findable) and after (in case a
            # concurrent listing pruned it in between as empty).
            self._register()
        for attempt in range(MAX_WRITE_ATTEMPTS):
            with self.engine.batch() as read:
                read.get(keys.version)
                read.hgetall(keys.meta)
            assert read.result is not None
            version, metas = read.result[0], read.result[1]
            now = self.engine.now_ms()
            live = {k: e for k, e in ((k, expiry(m)) for k, m in metas.items()) if e > now}
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
            batch.require_equal(keys.version, version)
            if stale:
                batch.hdel(keys.meta, *stale)
                batch.hdel(keys.data, *stale)
            batch.hset(keys.meta, {full: encode_meta(expires, now, category, tag_list, subject)})
            batch.hset(keys.data, {full: payload})
            register(self.engine, batch, subject, "working", self.namespace, full)
            batch.set(keys.version, uuid.uuid4().hex, px=keep_ms)
            batch.pexpire(keys.meta, keep_ms)
            batch.pexpire(keys.data, keep_ms)
            if not self.engine.clustered:
                self._queue_register(batch)
            if batch.execute().applied:
                if self.engine.clustered:
                    self._register()
                return WorkingEntry(
                    full, _fresh(payload), now / 1000, expires / 1000, category, tag_list, subject
                )
            if attempt >= 3:
                time.sleep(random.uniform(0, 0.002 * min(attempt, 20)))
        raise Conflict(
            f"working-memory namespace {short_repr(self.namespace)}: "
            f"{MAX_WRITE_ATTEMPTS} concurrent writes in a row "
            f"beat this one; giving up on {short_repr(full)}"
        )

    def _queue_register(self, batch: Any) -> None:
        top = wkeys.top_segment(self.namespace)
        batch.sadd(self._registry.namespaces(top), self.namespace)
        batch.sadd(self._registry.tops, top)

    def _register(self) -> None:
        with self.engine.batch() as batch:
            self._queue_register(batch)

    def delete(self, key: str) -> bool:
        """Delete ``key`` from the own namespace; True if a live entry was removed.

        Raises:
            InvalidKey: an ill-formed key, or a full path into another namespace.
        """
        full = wkeys.resolve_write(self.namespace, key)
        with self.engine.batch() as batch:
            batch.hget(self.keys.meta, full)
            batch.hdel(self.keys.meta, full)
            batch.hdel(self.keys.data, full)
        assert batch.result is not None
        meta = batch.result[0]
        return meta is not None and expiry(meta) > self.engine.now_ms()

    def delete_owned(self, keys: Sequence[str], subject: str) -> tuple[int, int]:
        """Delete those of ``keys`` (full keys of the own namespace) whose current version is
        labelled ``subject``; a version someone else wrote over it stays. Returns ``(removed,
        kept)``: live entries deleted, and keys whose version is not the subject's.

        One batch guarded by the namespace version, so a write landing in between is never
        deleted on the strength of a label it does not carry (the batch is read again).

        Raises:
            Conflict: the namespace kept changing under ``MAX_WRITE_ATTEMPTS`` tries.
        """
        wanted = sorted(set(keys))
        for _ in range(MAX_WRITE_ATTEMPTS):
            with self.engine.batch() as read:
                read.get(self.keys.version)
                read.hmget(self.keys.meta, wanted)
            assert read.result is not None
            version, metas = read.result[0], read.result[1]
            owned = [k for k, m in zip(wanted, metas, strict=True) if m is not None and _label(m) == subject]
            kept = sum(1 for m in metas if m is not None) - len(owned)
            if not owned:
                return 0, kept
            batch = self.engine.batch()
            batch.require_equal(self.keys.version, version)
            batch.hdel(self.keys.meta, *owned)
            batch.hdel(self.keys.data, *owned)
            if batch.execute().applied:
                now = self.engine.now_ms()
                live = sum(1 for k, m in zip(wanted, metas, strict=True) if k in owned and expiry(m) > now)
                return live, kept
        raise Conflict(f"working-memory namespace {short_repr(self.namespace)}: kept changing; forget again")

    def clear(self, prefix: str | None = None) -> int:
        """Delete the own namespace's entries under ``prefix`` (None: all of them).

        Returns how many live entries were removed.

        Raises:
            InvalidKey: a prefix outside the own namespace.
        """
        target = self.namespace if prefix is None else wkeys.resolve_write(self.namespace, prefix)
        keys = self.keys
        now = self.engine.now_ms()
        if target == self.namespace:
            with self.engine.batch() as batch:
                batch.hgetall(keys.meta)
                batch.delete(keys.meta, keys.data, keys.version)
            assert batch.result is not None
            removed = sum(1 for m in batch.result[0].values() if expiry(m) > now)
            self._unregister_if_empty(self.namespace)
            return removed
        metas = self.engine.hgetall(keys.meta)
        doomed = [k for k in metas if wkeys.covers(target, k)]
        if not doomed:
            return 0
        with self.engine.batch() as batch:
            batch.hdel(keys.meta, *doomed)
            batch.hdel(keys.data, *doomed)
        return sum(1 for k in doomed if expiry(metas[k]) > now)

    def _unregister_if_empty(self, namespace: str) -> None:
        # Remove, then look again: a writer that committed in between re-registered before or
        # registers after, and the second look puts it back if its data landed first.
        ns_set = self._registry.namespaces(wkeys.top_segment(namespace))
        self.engine.srem(ns_set, namespace)
        if self.engine.exists(NamespaceKeys.of(self.engine, namespace).meta):
            self.engine.sadd(ns_set, namespace)

    def prune(self) -> int:
        """Unregister every namespace whose entries all expired; returns how many (a write, run by
        the retention sweep: listings never write).

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """
        pruned = 0
        for top in sorted(self.engine.smembers(self._registry.tops)):
            for namespace in sorted(self.engine.smembers(self._registry.namespaces(top))):
                if not self.engine.exists(NamespaceKeys.of(self.engine, namespace).meta):
                    self._unregister_if_empty(namespace)
                    pruned += 1
        return pruned

    def __repr__(self) -> str:
        return f"<WorkingMemory {self.namespace!r} on {self.engine!r}>"


def _fresh(payload: str) -> Any:
    return json.loads(payload)


def _label(meta: str) -> str | None:
    return label_of(json.loads(meta))
