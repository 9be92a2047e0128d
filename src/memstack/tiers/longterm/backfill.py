"""Vectors for entries that lack one, whoever wrote them: a follower of the scopes' change logs.

An entry normally gets its vector from the writer's own background worker
(:class:`~memstack.tiers.longterm.vectors.EmbeddingWorker`). Entries written by a process without an
embedder (``MEMSTACK_EMBEDDER=none``, no ``embeddings`` extra), left over when a writer closed or
crashed, or stored before any embedder was configured are filled in by a :class:`VectorFollower`:
``memstack serve`` and ``serve --stdio`` run one over the whole engine (every tenant), and every
memory opened by ``memstack.open`` with an embedder runs one over its own view.

Each round (every ``poll`` seconds) a follower

1. finds the scopes (:func:`stored_scopes`, a key scan) on its first round, then at most every
   ``max(discover, 50 x the last scan's duration)`` seconds, so scans take at most ~2 % of its time;
2. reads the version and epoch of every known scope (one engine call; one per scope on a Redis
   Cluster) and, for a scope whose version moved, the ids its change log shows changed
   (:func:`~memstack.index.changelog.changes_since`, the rule every search cache follows):
   only those entries are read again (a new epoch, or a log that no longer reaches back, reads the
   whole scope);
3. embeds the entries that have waited ``grace`` seconds (the writer's own worker normally writes
   their vector first) and writes each vector guarded by the exact stored entry, so a vector never
   lands on a text it was not computed from.

Idle, a round is one read; no write path does anything for it. Vectors of another model are counted
as stale and left alone (re-embedding is explicit: ``LongTermMemory.reembed()``), except that a
follower made with ``reembed_stale`` (``memstack serve``) recomputes those its first discovery
finds, as the server's start-up backfill always did. Progress goes to the ``memstack.tiers.longterm`` log.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Final

from ...engines import Engine
from ...engines.prefixed import tenant_engine
from ...foundation.forks import Flag, renew_in_children
from ...foundation.keyspace import family_of, tenant_prefix
from ...index.changelog import changes_since
from ...search.embedders import Embedder
from .entry import from_json
from .layout import LOG_MAX, ScopeKeys
from .query import document_text
from .vector_put import put_vector, vector_state
from .vectors import BATCH_SIZE, JOIN_TIMEOUT, MAX_INPUT_CHARS, encode_vector, track, untrack

__all__ = ["VectorFollower", "pending_vectors", "stored_scopes"]

log = logging.getLogger("memstack.tiers.longterm")

READ_CHUNK: Final = 500
"""Entries read per engine call."""
SCAN_SHARE: Final = 50.0
"""Discovery waits at least this many times the last scan's duration (scans: <= ~2 % of the time)."""
RETRY_AFTER: Final = 30.0
"""Seconds a follower waits after its embedder failed before it tries again."""
CATCH_UP_SHARE: Final = 0.25
"""A round comes sooner once a scope changed by more than this share of its log between two."""
MIN_POLL: Final = 0.05
"""Shortest wait between two rounds (seconds)."""
LOG_EVERY: Final = 10.0
"""Seconds between two progress lines."""


def stored_scopes(engine: Engine) -> list[tuple[str | None, str]]:
    """Every ``(tenant, scope)`` holding long-term entries on ``engine`` (tenant None: the keys of
    ``engine`` itself, not under a tenant prefix), sorted. Reads keys only."""
    found = set()
    for key in engine.scan(""):
        tenant, family = family_of(key)
        if family is not None and family[0].name == "long_term.ids":
            found.add((tenant, family[1]["scope"]))
    return sorted(found, key=lambda pair: (pair[0] or "", pair[1]))


@dataclass(eq=False)
class _Scope:
    """What a follower knows of one scope: its version and the ids waiting for a vector."""

    view: Engine
    keys: ScopeKeys
    prefix: str  # the view's keys on the follower's engine: prefix + key
    initial: bool  # found by the first discovery (``reembed_stale`` applies)
    epoch: str | None = None
    version: int = -1
    waiting: dict[str, tuple[float, bool]] = field(default_factory=dict)  # id -> (since, stale too)
    stale: set[str] = field(default_factory=set)
    tenant: str | None = None


class VectorFollower:
    """Gives every entry of every scope on ``engine`` a vector of ``embedder`` (module docstring).

    ``poll``: seconds between rounds; ``grace``: seconds an entry waits before this follower embeds
    it; ``discover``: least seconds between two scope scans; ``clock``: monotonic seconds (tests
    call :meth:`step` with their own ``now`` instead of starting the thread).
    """

    def __init__(
        self,
        engine: Engine,
        embedder: Embedder,
        *,
        poll: float = 1.0,
        grace: float = 2.0,
        discover: float = 5.0,
        reembed_stale: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine, self.embedder = engine, embedder
        self.poll, self.grace, self.discover = poll, grace, discover
        self.reembed_stale = reembed_stale
        self._clock = clock
        self._scopes: dict[tuple[str | None, str], _Scope] = {}
        self._views: dict[str | None, Engine] = {None: engine}
        self._stop = Flag()
        self._renew_in_child()
        renew_in_children(self)
        self._next_discovery = float("-inf")
        self._discovered = False
        self._retry_at = float("-inf")
        self._last_progress = float("-inf")  # monotonic seconds of the last progress line
        self._failing = False  # the last round failed (logged once per failure streak)
        self._announced = False
        self._moved = 0  # most changes one scope saw between the last two rounds
        self.written = 0
        """Vectors this follower wrote."""
        self.pending = 0
        """Entries waiting for a vector after the last round (every known scope)."""
        self.stale = 0
        """Entries whose vector is another model's, after the last round."""
        self._by_tenant: dict[str | None, tuple[int, int]] = {}
        self._written_by: Counter[str | None] = Counter()
        self.settled = False
        """True once every entry found since the start had its vector (the first pass is done)."""

    def _renew_in_child(self) -> None:
        """A new lock and no thread (also the first state): a forked child's :meth:`start` starts its own."""
        self._lock = threading.Lock()  # one round at a time
        self._thread: threading.Thread | None = None

    # -- the thread ----------------------------------------------------------------------------
    def start(self) -> None:
        """Run rounds on a daemon thread every ``poll`` seconds until :meth:`close`."""
        if self._thread is None:
            track(self)
            self._thread = threading.Thread(target=self._loop, name="memstack-vectors", daemon=True)
            self._thread.start()

    def close(self, timeout: float | None = None) -> int:
        """Stop after the current embedding batch (``timeout`` is ignored: a batch is short);
        returns how many entries were still waiting. Idempotent."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(JOIN_TIMEOUT)
        untrack(self)
        return self.pending

    def _wait(self) -> float:
        """Seconds until the next round: ``poll``, shorter while the scopes change fast, so that a
        round reads the changes from the log (cost: the changes) before the log passes them
        (then a round re-reads the whole scope: a cost that grows with the scope)."""
        if self._moved <= CATCH_UP_SHARE * LOG_MAX:
            return self.poll
        return max(self.poll * CATCH_UP_SHARE * LOG_MAX / self._moved, MIN_POLL)

    def _loop(self) -> None:
        while not self._stop.wait(self._wait()):
            try:
                self.step()
            except Exception:  # the engine went away, say: try again next round
                if not self._failing:  # once per streak, not once a second
                    log.warning("following the memory change logs for vectors failed; retrying",
                                exc_info=True)  # fmt: skip
                self._failing = True
            else:
                if self._failing:
                    log.info("following the memory change logs for vectors again")
                self._failing = False

    # -- one round -----------------------------------------------------------------------------
    def step(self, now: float | None = None) -> int:
        """One round (discover when due, read what changed, embed what is due); returns how many
        vectors it wrote.

        Raises:
            EngineError: the engine failed (the next round starts over where it must).
        """
        now = self._clock() if now is None else now
        with self._lock:
            if now >= self._next_discovery:
                self._discover(now)
            self._read_changes(now)
            self._count()
            if self.pending and not self._announced:
                self._announced, self._last_progress = True, time.monotonic()
                log.info("vectors: %d memory entries wait for a vector of %s; filling them in",
                         self.pending, self.embedder.model_id)  # fmt: skip
            written = 0
            if now >= self._retry_at:
                try:
                    written = self._embed_due(now)
                except Exception:  # an endpoint down, a broken model: retry later, never die
                    self._retry_at = now + RETRY_AFTER
                    log.warning("computing memory vectors failed; retrying in %.0f s", RETRY_AFTER,
                                exc_info=True)  # fmt: skip
            self._report()
        return written

    def survey(self) -> tuple[int, int]:
        """``(waiting, stale)`` over every scope now, embedding nothing (reads only)."""
        with self._lock:
            self._discover(self._clock())
            self._read_changes(self._clock())
            self._count()
        return self.pending, self.stale

    def _discover(self, now: float) -> None:
        started = time.perf_counter()
        found = stored_scopes(self.engine)
        took = time.perf_counter() - started
        self._next_discovery = now + max(self.discover, SCAN_SHARE * took)
        for tenant, name in found:
            if (tenant, name) in self._scopes:
                continue
            view = self._views.get(tenant)
            if view is None:
                view = self._views[tenant] = tenant_engine(self.engine, tenant or "")
            prefix = "" if tenant is None else tenant_prefix(tenant)
            self._scopes[(tenant, name)] = _Scope(
                view, ScopeKeys.of(view, name), prefix, not self._discovered, tenant=tenant
            )
        self._discovered = True

    def _read_changes(self, now: float) -> None:
        scopes = list(self._scopes.items())
        versions = self._versions([scope for _, scope in scopes])
        self._moved = 0
        for (key, scope), (raw_version, epoch) in zip(scopes, versions, strict=True):
            if scope.version >= 0 and epoch == scope.epoch and int(raw_version or 0) == scope.version:
                continue
            if scope.version >= 0 and epoch == scope.epoch:
                self._moved = max(self._moved, int(raw_version or 0) - scope.version)
            if not self._sync(scope, epoch, int(raw_version or 0), now):
                del self._scopes[key]  # emptied (forgotten, wiped): a later discovery finds it again

    def _versions(self, scopes: Sequence[_Scope]) -> list[tuple[str | None, str | None]]:
        """``(version, epoch)`` of each scope: one engine call, or one per scope on a cluster
        (a call may not span slots there)."""
        out: list[tuple[str | None, str | None]] = []
        if self.engine.clustered:
            for scope in scopes:
                version, epoch = scope.view.mget([scope.keys.version, scope.keys.epoch])
                out.append((version, epoch))
            return out
        for start in range(0, len(scopes), READ_CHUNK):
            chunk = scopes[start : start + READ_CHUNK]
            keys = [k for s in chunk for k in (s.prefix + s.keys.version, s.prefix + s.keys.epoch)]
            values = self.engine.mget(keys)
            out += list(zip(values[::2], values[1::2], strict=True))
        return out

    def _sync(self, scope: _Scope, epoch: str | None, seen: int, now: float) -> bool:
        """Bring ``scope`` up to date (``seen``: its version as just read); False when it holds
        no entry any more."""
        if scope.epoch == epoch and scope.version >= 0:
            # the log's tail since the version just read, with the kit's slack for later writes
            version, changed = changes_since(scope.view, scope.keys, scope.version, seen)
            if changed is not None:
                self._classify(scope, sorted(changed), now)
                scope.version = version
                return True
        batch = scope.view.batch()  # the version before the data: later changes come next round
        batch.get(scope.keys.version)
        batch.smembers(scope.keys.ids)
        result = batch.execute()
        scope.stale.clear()
        earlier, scope.waiting = scope.waiting, {}
        self._classify(scope, sorted(result[1]), now, earlier)
        scope.epoch, scope.version = epoch, int(result[0] or 0)
        scope.initial = False
        return bool(result[1])

    def _classify(
        self,
        scope: _Scope,
        ids: Sequence[str],
        now: float,
        earlier: dict[str, tuple[float, bool]] | None = None,
    ) -> None:
        model, dim = self.embedder.model_id, self.embedder.dim
        restale = self.reembed_stale and scope.initial
        since = now - self.grace if scope.initial else now  # found at start: nobody else is on it
        known = scope.waiting if earlier is None else earlier
        for start in range(0, len(ids), READ_CHUNK):
            chunk = ids[start : start + READ_CHUNK]
            batch = scope.view.batch()
            batch.mget([scope.keys.entry(i) for i in chunk])
            batch.hmget(scope.keys.vectors, chunk)
            result = batch.execute()
            for entry_id, raw, payload in zip(chunk, result[0], result[1], strict=True):
                state = vector_state(raw, payload, model, dim)
                scope.waiting.pop(entry_id, None)
                scope.stale.discard(entry_id)
                if state == "missing" or (state == "stale" and restale):
                    scope.waiting[entry_id] = known.get(entry_id, (since, state == "stale"))
                elif state == "stale":
                    scope.stale.add(entry_id)

    def _embed_due(self, now: float) -> int:
        written = 0
        for scope in list(self._scopes.values()):
            due = [i for i, (since, _) in scope.waiting.items() if now - since >= self.grace]
            for start in range(0, len(due), BATCH_SIZE):
                if self._stop.is_set():
                    return written
                done = self._embed(scope, due[start : start + BATCH_SIZE])
                written += done
                self._written_by[scope.tenant] += done
                # The counts /v1/info and doctor show move during a long first pass too.
                self.written, self.pending = self.written + done, max(0, self.pending - done)
                if self.pending and time.monotonic() - self._last_progress >= LOG_EVERY:
                    self._last_progress = time.monotonic()
                    log.info("vectors: %d written, %d still waiting", self.written, self.pending)
        return written

    def _embed(self, scope: _Scope, ids: list[str]) -> int:
        model, dim = self.embedder.model_id, self.embedder.dim
        batch = scope.view.batch()
        batch.mget([scope.keys.entry(i) for i in ids])
        batch.hmget(scope.keys.vectors, ids)
        batch.get(scope.keys.version)
        result = batch.execute()
        jobs: list[tuple[str, str, str]] = []
        for entry_id, raw, payload in zip(ids, result[0], result[1], strict=True):
            if self._wanted(scope, entry_id, raw, payload):
                jobs.append((entry_id, raw, document_text(from_json(raw))))
            else:  # written or changed meanwhile: the change log brings it back if need be
                scope.waiting.pop(entry_id, None)
                if vector_state(raw, payload, model, dim) == "stale":
                    scope.stale.add(entry_id)
        if not jobs:
            return 0
        vectors = self.embedder.embed([text[:MAX_INPUT_CHARS] for _, _, text in jobs])
        written, version, wanted = 0, result[2], partial(self._wanted, scope)
        for (entry_id, raw, text), vector in zip(jobs, vectors, strict=True):
            payload = encode_vector(model, text, vector)
            applied, version = put_vector(scope.view, scope.keys, (entry_id, raw, payload), version, wanted)
            if applied:
                written += 1
                scope.waiting.pop(entry_id, None)
        return written

    def _wanted(self, scope: _Scope, entry_id: str, raw: str | None, payload: str | None) -> bool:
        """Whether this follower writes the vector of ``entry_id`` (as read: ``raw``, ``payload``)."""
        state = vector_state(raw, payload, self.embedder.model_id, self.embedder.dim)
        flagged = scope.waiting.get(entry_id, (0.0, False))[1]
        return raw is not None and (state == "missing" or (state == "stale" and flagged))

    def _count(self) -> None:
        self.pending = sum(len(s.waiting) for s in self._scopes.values())
        self.stale = sum(len(s.stale) for s in self._scopes.values())
        by: dict[str | None, tuple[int, int]] = {}
        for scope in self._scopes.values():
            pending, stale = by.get(scope.tenant, (0, 0))
            by[scope.tenant] = (pending + len(scope.waiting), stale + len(scope.stale))
        self._by_tenant = by  # replaced whole: readers on other threads see one round or the next

    def counts(self, tenant: str | None) -> tuple[int, int, int]:
        """``(pending, stale, written)`` of one tenant's scopes after the last round: what that
        tenant may be shown (the totals would tell it about every other tenant's entries)."""
        pending, stale = self._by_tenant.get(tenant, (0, 0))
        return pending, stale, self._written_by[tenant]

    def _report(self) -> None:
        self._count()
        if not self.pending:
            if self._announced:
                log.info("vectors: every memory entry has one (%d written)", self.written)
            self._announced = False
            self.settled = True


def pending_vectors(engine: Engine, embedder: Embedder) -> tuple[int, int]:
    """``(waiting, stale)``: entries of every scope on ``engine`` without a current vector of
    ``embedder``, and entries whose vector is another model's. Reads only.

    Raises:
        EngineError: the engine failed.
        EmbeddingError: an endpoint whose vector size is not known yet could not be probed.
    """
    return VectorFollower(engine, embedder).survey()
