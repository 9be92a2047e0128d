"""The defaults of the server's limits, in one place.

:class:`~memstack.doors.server.app.ServerSettings`, the parts it configures
(:class:`~memstack.doors.server.slow_work.SlowWork`, :class:`~memstack.doors.server.watch_hub.WatchHub`,
:class:`~memstack.doors.server.connections.ConnectionLimits`) and the options of ``memstack serve``
all take their defaults from here. The module imports nothing outside the standard library, so the
CLI can show them in ``--help`` without the ``server`` extra.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BODY_TIMEOUT",
    "HEAD_TIMEOUT",
    "MAX_BODY_BYTES",
    "MAX_CONNECTIONS",
    "MODEL_RUNS_PER_TENANT",
    "MODEL_THREADS",
    "RETENTION_INTERVAL",
    "WATCH_IDLE_SECONDS",
    "WATCH_PER_KEY",
    "WATCH_PER_TENANT",
]

MAX_BODY_BYTES: Final = 1 << 20
"""Largest request body accepted (413 past it)."""
RETENTION_INTERVAL: Final = 3600.0
"""Seconds between retention sweeps of every tenant."""
MODEL_THREADS: Final = 4
"""Threads of the model-backed operations (dream runs), apart from the rest."""
MODEL_RUNS_PER_TENANT: Final = 2
"""Model-backed runs one tenant may have running or waiting at once (429 past it)."""
WATCH_PER_KEY: Final = 100
"""Board event streams one API key may hold at once (429 past it)."""
WATCH_PER_TENANT: Final = 500
"""Board event streams one tenant may hold at once (429 past it)."""
WATCH_IDLE_SECONDS: Final = 900.0
"""Seconds after which a board event stream that saw no change is ended."""
HEAD_TIMEOUT: Final = 10.0
"""Seconds a connection has to send a whole request head."""
BODY_TIMEOUT: Final = 60.0
"""Seconds a request has to send its whole body."""
MAX_CONNECTIONS: Final = 1000
"""Connections open at once."""
