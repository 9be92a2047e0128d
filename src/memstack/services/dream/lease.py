"""A per-scope lease in the engine: at most one pass per scope runs at a time, across processes.

Taken with ``SET key token NX PX ttl`` and released by compare-and-delete (a guarded batch), so a
process never releases a lease that expired and was taken by another.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Final

from ...engines import Engine
from ...foundation.errors import Conflict
from .keys import DreamKeys

__all__ = ["LEASE_TTL", "hold", "release", "take"]

LEASE_TTL: Final = 15 * 60.0
"""Seconds a lease lasts if its holder dies without releasing it."""


def take(engine: Engine, scope: str, ttl: float = LEASE_TTL) -> str | None:
    """The lease token, or None when another holder has the scope."""
    token = uuid.uuid4().hex
    key = DreamKeys.of(engine, scope).lease
    return token if engine.set(key, token, nx=True, px=max(1, int(ttl * 1000))) else None


def release(engine: Engine, scope: str, token: str) -> bool:
    """Drop the lease if ``token`` still holds it; False when it had expired or changed hands."""
    key = DreamKeys.of(engine, scope).lease
    batch = engine.batch()
    batch.require_equal(key, token)
    batch.delete(key)
    return bool(batch.execute().applied)


@contextlib.contextmanager
def hold(engine: Engine, scope: str, ttl: float = LEASE_TTL) -> Iterator[str]:
    """Hold the scope's lease for the ``with`` block.

    Raises:
        Conflict: another process holds it.
    """
    token = take(engine, scope, ttl)
    if token is None:
        raise Conflict(f"scope {scope!r}: another dream pass holds the lease")
    try:
        yield token
    finally:
        release(engine, scope, token)
