"""The retention sweep of ``memstack serve``: every tenant, every ``interval`` seconds, on a daemon
thread. Tenants are found from their keys (``t:{tenant}:…``)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from ...engines import Engine
from ...engines.prefixed import tenant_engine
from ...foundation.keyspace import split_tenant
from ...foundation.keyspace.tenants import TENANT_PREFIX
from ..tiers import Tiers
from .retention import Retention, sweep

__all__ = ["RetentionSweeper", "stored_tenants"]

log = logging.getLogger("memstack.services.lifecycle")


def stored_tenants(engine: Engine) -> list[str]:
    """Every tenant holding a key on ``engine``, sorted (reads keys only)."""
    return sorted({t for key in engine.scan(TENANT_PREFIX) if (t := split_tenant(key)[0]) is not None})


def sweep_all(engine: Engine, retention: Retention) -> dict[str, int]:
    """One sweep of every tenant; the totals per tier."""
    totals: dict[str, int] = {}
    for tenant in stored_tenants(engine):
        for tier, count in sweep(Tiers(tenant_engine(engine, tenant)), retention).items():
            totals[tier] = totals.get(tier, 0) + count
    return totals


@dataclass
class RetentionSweeper:
    """:func:`sweep_all` every ``interval`` seconds until :meth:`stop`."""

    engine: Engine
    retention: Retention
    interval: float
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="memstack-retention", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                totals = sweep_all(self.engine, self.retention)
            except Exception:  # a failed sweep (engine away) is retried at the next interval
                log.warning("the retention sweep failed", exc_info=True)
                continue
            if any(totals.values()):
                log.info("retention sweep: %s", totals)

    def stop(self, timeout: float | None = None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
