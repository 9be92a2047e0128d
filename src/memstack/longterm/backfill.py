"""Vectors for entries written before an embedder was configured: found by a scan, filled in the
background by ``memstack serve``, counted by ``memstack doctor``.

Only this module's writer (:func:`backfill`) writes; :func:`stored_scopes` and
:func:`pending_vectors` only read.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from ..engines import Engine
from ..engines.prefixed import tenant_engine
from ..keyspace import family_of
from ..search.embedders import Embedder
from . import hybrid
from .index_cache import scope_cache
from .layout import ScopeKeys
from .store import LongTermMemory

__all__ = ["Backfill", "backfill", "pending_vectors", "stored_scopes"]

log = logging.getLogger("memstack.longterm")


def stored_scopes(engine: Engine) -> list[tuple[str | None, str]]:
    """Every ``(tenant, scope)`` holding long-term entries on ``engine`` (tenant None: untenanted
    library data), sorted. Reads keys only."""
    found = set()
    for key in engine.scan(""):
        tenant, family = family_of(key)
        if family is not None and family[0].name == "long_term.ids":
            found.add((tenant, family[1]["scope"]))
    return sorted(found, key=lambda pair: (pair[0] or "", pair[1]))


def _view(engine: Engine, tenant: str | None) -> Engine:
    return engine if tenant is None else tenant_engine(engine, tenant)


def pending_vectors(engine: Engine, embedder: Embedder) -> int:
    """Entries over every scope without a current vector of ``embedder`` (reads only)."""
    pending = 0
    for tenant, scope in stored_scopes(engine):
        view = _view(engine, tenant)
        cache = scope_cache(view, scope)
        with cache.lock:
            cache.refresh(view, ScopeKeys.of(view, scope))
            pending += len(cache.texts) - len(hybrid.valid_vector_ids(cache, embedder))
    return pending


def backfill(engine: Engine, embedder: Embedder, stop: threading.Event | None = None) -> int:
    """Compute every missing or outdated vector of every scope; returns how many were written.

    Stops between scopes when ``stop`` is set. A scope that fails is logged and skipped (the
    next start tries again); embedder errors never stop the other scopes.
    """
    written = 0
    for tenant, scope in stored_scopes(engine):
        if stop is not None and stop.is_set():
            break
        try:
            written += LongTermMemory(_view(engine, tenant), scope, embedder=embedder).reembed()
        except Exception:  # one scope's failure (an endpoint down) must not stop the others
            log.warning("backfilling vectors of scope %r failed", scope, exc_info=True)
    return written


@dataclass
class Backfill:
    """:func:`backfill` on a daemon thread, started once; ``written`` and ``done`` for reports."""

    engine: Engine
    embedder: Embedder
    written: int = 0
    done: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="memstack-backfill", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.written = backfill(self.engine, self.embedder, self._stop)
        finally:
            self.done = True

    def stop(self, timeout: float | None = None) -> None:
        """Ask the thread to stop after the current scope and wait up to ``timeout`` seconds."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
