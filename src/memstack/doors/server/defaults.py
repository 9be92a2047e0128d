"""The server's limits, in one table: each one's ``memstack serve`` option, default and description.

A row (:class:`Limit`) is the one home of its limit: ``memstack serve`` generates its option from
the row (flag, type, default, ``--help`` text), and
:class:`~memstack.doors.server.app.ServerSettings`, the parts it configures
(:class:`~memstack.doors.server.slow_work.SlowWork`, :class:`~memstack.doors.server.watch_hub.WatchHub`,
:class:`~memstack.doors.server.connections.ConnectionLimits`,
:class:`~memstack.doors.server.throttle.AuthThrottle`) take their defaults from it. The module imports
nothing outside the standard library but memstack's error tree, so the CLI can show the options
in ``--help`` without the ``server`` extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

from ...foundation.errors import InvalidConfiguration

__all__ = [
    "AUTH_FAILURE_BURST",
    "AUTH_FAILURE_RATE",
    "BODY_TIMEOUT",
    "HEAD_TIMEOUT",
    "LIMITS",
    "MAX_BODY_BYTES",
    "MAX_CONNECTIONS",
    "MODEL_RUNS_PER_TENANT",
    "MODEL_THREADS",
    "RETENTION_INTERVAL",
    "WATCH_IDLE_SECONDS",
    "WATCH_PER_KEY",
    "WATCH_PER_TENANT",
    "Limit",
]

N = TypeVar("N", int, float)


@dataclass(frozen=True, slots=True)
class Limit(Generic[N]):
    """One limit of the server.

    Attributes:
        name: the keyword that sets it (``serve``'s parameter, and ServerSettings' where it has one).
        default: the value when nothing sets it; its type is the option's.
        help: what it bounds (the option's ``--help`` text).
        env: the environment variable read when the option is not given ("": none).
        minimum: the smallest value the option takes (None: the part it configures checks).
        flag: the ``memstack serve`` flag where it is not the name's (``--watch-idle``).
    """

    name: str
    default: N
    help: str
    env: str = ""
    minimum: N | None = None
    flag: str = ""

    @property
    def kind(self) -> type[N]:
        return type(self.default)

    @property
    def option(self) -> str:
        """The ``memstack serve`` flag: ``--`` and the name with dashes, unless :attr:`flag` says."""
        return self.flag or "--" + self.name.replace("_", "-")

    def resolve(self, given: N | None, environ: Mapping[str, str]) -> N:
        """``given``, else the value of :attr:`env` in ``environ``, else :attr:`default`.

        Raises:
            InvalidConfiguration: the variable's value is not a number of the limit's type (names it).
        """
        if given is not None:
            return given
        text = environ.get(self.env, "") if self.env else ""
        if not text:
            return self.default
        try:
            return self.kind(text)
        except ValueError:
            raise InvalidConfiguration(f"${self.env}={text!r}: expected a {self.kind.__name__}") from None


MAX_BODY_BYTES: Final = Limit("max_body_bytes", 1 << 20, "Largest request body accepted (413 past it).")
RETENTION_INTERVAL: Final = Limit(
    "retention_interval", 3600.0, "Seconds between retention sweeps of every tenant.", minimum=1
)
AUTH_FAILURE_BURST: Final = Limit(
    "auth_failure_burst",
    10,
    "Failed authentications one client address may make in a row before 429 (0: no throttle).",
    env="MEMSTACK_AUTH_FAILURE_BURST",
)
AUTH_FAILURE_RATE: Final = Limit(
    "auth_failure_rate",
    6.0,
    "Failed authentications forgiven per minute once the burst is spent.",
    env="MEMSTACK_AUTH_FAILURE_RATE",
)
MAX_CONNECTIONS: Final = Limit(
    "max_connections",
    1000,
    "Connections open at once; past it the one waiting longest for its request head is closed.",
)
HEAD_TIMEOUT: Final = Limit("head_timeout", 10.0, "Seconds a connection has to send a whole request head.")
BODY_TIMEOUT: Final = Limit("body_timeout", 60.0, "Seconds a request has to send its whole body.")
MODEL_THREADS: Final = Limit(
    "model_threads", 4, "Threads of the model-backed operations (dream runs), apart from the rest."
)
MODEL_RUNS_PER_TENANT: Final = Limit(
    "model_runs_per_tenant",
    2,
    "Model-backed runs one tenant may have running or waiting at once (429 past it).",
)
WATCH_PER_KEY: Final = Limit(
    "watch_per_key", 100, "Board event streams one API key may hold at once (429 past it)."
)
WATCH_PER_TENANT: Final = Limit(
    "watch_per_tenant", 500, "Board event streams one tenant may hold at once (429 past it)."
)
WATCH_IDLE_SECONDS: Final = Limit(
    "watch_idle_seconds",
    900.0,
    "Seconds after which a board event stream that saw no change is ended.",
    flag="--watch-idle",
)

LIMITS: Final[tuple[Limit[int] | Limit[float], ...]] = (
    MAX_BODY_BYTES,
    RETENTION_INTERVAL,
    AUTH_FAILURE_BURST,
    AUTH_FAILURE_RATE,
    MAX_CONNECTIONS,
    HEAD_TIMEOUT,
    BODY_TIMEOUT,
    MODEL_THREADS,
    MODEL_RUNS_PER_TENANT,
    WATCH_PER_KEY,
    WATCH_PER_TENANT,
    WATCH_IDLE_SECONDS,
)
"""Every limit, in the order ``memstack serve --help`` lists them."""
