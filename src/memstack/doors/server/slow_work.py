"""Slow work (a call to a chat model) off the request path: its own threads, a share per tenant.

Every operation runs on one shared pool of worker threads. A dream pass waits on a chat model
for as long as the model takes (minutes, for a slow one), so a handful of runs used to hold every
worker and another tenant's plain reads queued behind them. The operations of :data:`SLOW_OPS`
run instead on a pool of their own, :attr:`SlowWork.threads` threads wide, and each tenant may
have at most :attr:`SlowWork.per_tenant` of them running or waiting at once: past that the
request is refused with 429 and ``Retry-After`` at once, before any work (a tenant cannot fill
the slow pool's queue for the others either). A request waiting for a slow thread holds no
thread at all. Each model call also ends at its own whole-call deadline
(:mod:`memstack.llm._http`), so a slow thread is never held for longer than the passes' calls.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final, TypeVar

import anyio.to_thread
from starlette.exceptions import HTTPException

from ...foundation.errors import InvalidConfiguration, LimitReached
from ...ops.run import arun
from ...ops.spec import Op
from ...ops.tools import Runner
from ...services.memory import Memory
from .defaults import MODEL_RUNS_PER_TENANT, MODEL_THREADS

__all__ = ["SLOW_OPS", "SlowWork"]

SLOW_OPS: Final = frozenset({"dream.run"})
"""Operations that may wait on a chat model."""
RETRY_SECONDS: Final = 30
"""``Retry-After`` of a run refused because its tenant has its share running."""

_T = TypeVar("_T")


class SlowWork:
    """The slow pool of one server: ``threads`` threads, ``per_tenant`` runs per tenant."""

    def __init__(
        self, threads: int = MODEL_THREADS.default, per_tenant: int = MODEL_RUNS_PER_TENANT.default
    ) -> None:
        for name, value in (("threads", threads), ("per_tenant", per_tenant)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
                raise InvalidConfiguration(f"slow work {name}={value!r}: must be an int from 1 to 1024")
        self.threads, self.per_tenant = threads, per_tenant
        self._limiter: anyio.CapacityLimiter | None = None  # made in the event loop that uses it
        self._busy: Counter[str] = Counter()
        self._lock = threading.Lock()

    def busy(self, tenant: str) -> int:
        """Slow operations of ``tenant`` running or waiting now."""
        with self._lock:
            return self._busy[tenant]

    @asynccontextmanager
    async def _share(self, tenant: str) -> AsyncIterator[None]:
        with self._lock:
            if self._busy[tenant] >= self.per_tenant:
                raise HTTPException(
                    429,
                    f"tenant {tenant!r} already has {self.per_tenant} model-backed runs in progress; "
                    f"retry in {RETRY_SECONDS} s",
                    headers={"Retry-After": str(RETRY_SECONDS)},
                )
            self._busy[tenant] += 1
        try:
            yield
        finally:
            with self._lock:
                self._busy[tenant] -= 1
                if not self._busy[tenant]:
                    del self._busy[tenant]

    async def run(self, tenant: str, work: Callable[..., _T], *args: Any) -> _T:
        """``work(*args)`` on a slow thread, counted against ``tenant``'s share.

        Raises:
            HTTPException: 429 when ``tenant`` has its share running or waiting.
        """
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.threads)
        async with self._share(tenant):
            return await anyio.to_thread.run_sync(work, *args, limiter=self._limiter)

    def runner(self, tenant: str) -> Runner:
        """How the tool doors (``/v1/tools``, MCP) run an operation for ``tenant``: the ones of
        :data:`SLOW_OPS` (the ``dream_dry_run`` tool) on these threads under the tenant's share,
        the rest as usual. A refused share is :class:`LimitReached` (429 / a tool error)."""

        async def run(op: Op[Any], mem: Memory, request: Any) -> Any:
            if op.name not in SLOW_OPS:
                return await arun(op, mem, request)
            try:
                return await self.run(tenant, op.handler, mem, request)
            except HTTPException as exc:
                raise LimitReached(str(exc.detail)) from None

        return run
