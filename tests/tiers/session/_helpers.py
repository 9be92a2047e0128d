"""Helpers for the session tests."""

from __future__ import annotations

import math

from memstack import ManualClock
from memstack.engines import Engine


def set_ms(clock: ManualClock, engine: Engine, target_ms: int) -> None:
    """Move ``clock`` so that ``engine.now_ms()`` is exactly ``target_ms`` (float-safe)."""
    when = target_ms / 1000
    while int(when * 1000) < target_ms:
        when = math.nextafter(when, math.inf)
    clock.set(max(when, clock.now()))
    assert engine.now_ms() == target_ms
