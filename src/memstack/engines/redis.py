"""The Redis engines: standalone (``redis://``, ``rediss://``, ``unix://``) and Cluster
(``redis+cluster://``, ``rediss+cluster://``).

Every :meth:`RedisEngine.execute` is one ``EVALSHA`` of the script in :mod:`._redis_lua`: one
round trip, atomic, interpreted on the server with the semantics of the memory engine. Time
comes from the engine clock: a key's physical expire-time is its logical one plus a bias. On the
system clock the bias is -1 ms and Redis expires keys itself (it drops a key when ``now > at``,
the seam when ``now >= at``, hence the millisecond); on any other clock it is 100 years, and the
script purges keys the engine clock says are dead before it touches them, so a manual clock alone
decides when keys die.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, NoReturn, cast
from urllib.parse import urlsplit, urlunsplit

import redis as redis_py
import redis.cluster as redis_cluster
from redis.backoff import NoBackoff
from redis.crc import key_slot
from redis.exceptions import (
    AskError,
    ClusterError,
    MovedError,
    NoScriptError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TryAgainError,
)
from redis.retry import Retry

from ..clock import Clock, SystemClock
from ..errors import CrossSlot, EngineClosed, EngineUnavailable, InvalidUrl, MemstackError
from . import _redis_codec as codec
from ._dispatch import Dispatcher
from ._redis_conns import Connections
from ._redis_lua import SCRIPT
from ._redis_pubsub import Listener
from .base import BatchResult, Engine, Op, Subscription

__all__ = ["MANUAL_CLOCK_BIAS_MS", "SYSTEM_CLOCK_BIAS_MS", "RedisEngine"]

MANUAL_CLOCK_BIAS_MS: Final = 100 * 36525 * 86_400_000 // 100
"""Added to physical expire-times under a non-system clock (100 years, in ms)."""
SYSTEM_CLOCK_BIAS_MS: Final = -1
"""Added to physical expire-times under the system clock: Redis keeps a key alive at ``now == at``."""

_SHA: Final = hashlib.sha1(SCRIPT.encode()).hexdigest()
_SCAN_COUNT: Final = 1000


def _unavailable_errors() -> tuple[type[BaseException], ...]:
    # ClusterDownError and TryAgainError are ResponseErrors to redis-py, outages to us.
    return (
        redis_py.ConnectionError,
        redis_py.TimeoutError,
        RedisClusterException,
        ClusterError,
        TryAgainError,
        OSError,
    )


class RedisEngine(Engine):
    """An engine on a Redis server or a Redis Cluster.

    Args:
        url: ``redis://host:port/db``, ``rediss://…``, ``unix:///path?db=N`` or
            ``redis+cluster://host:port`` / ``rediss+cluster://…`` (any node of the cluster).
        clock: time source for TTLs (default: the system clock).
        socket_timeout: seconds one command may take before :class:`EngineUnavailable`.
        connect_timeout: seconds a connection attempt may take.
        max_connections: size of the connection pool, and most idle batch connections kept
            (per node in a cluster).

    Raises:
        InvalidUrl: a URL of another scheme.
        EngineUnavailable: the server cannot be reached.
    """

    def __init__(
        self,
        url: str,
        clock: Clock | None = None,
        *,
        socket_timeout: float = 2.0,
        connect_timeout: float = 2.0,
        max_connections: int = 64,
    ) -> None:
        super().__init__(url, clock)
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster"):
            raise InvalidUrl(
                f"engine URL {url!r}: not a Redis URL (redis://, rediss://, unix://, redis+cluster://)"
            )
        self.clustered = scheme.endswith("+cluster")
        self.name = "redis-cluster" if self.clustered else "redis"
        system = isinstance(self.clock, SystemClock)
        self._bias = SYSTEM_CLOCK_BIAS_MS if system else MANUAL_CLOCK_BIAS_MS
        # Under the system clock Redis' own expiry is the engine's: no per-key probe is needed.
        self._head_tail = (str(self._bias), "" if system else "1", "")  # ARGV[4]: no dedupe
        self._options: dict[str, Any] = {
            "decode_responses": True,
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": connect_timeout,
            # A retried EVALSHA could apply a batch twice; failures surface as EngineUnavailable.
            "retry": Retry(NoBackoff(), 0),
            "max_connections": max_connections,
        }
        self._client_url = urlunsplit(urlsplit(url)._replace(scheme=scheme.removesuffix("+cluster")))
        self._wait = socket_timeout + connect_timeout
        self._closed = False
        self._lock = threading.Lock()
        self._dispatch = Dispatcher(self.name)
        self._listener = Listener(self._pubsub_client, self._dispatch, self._wait, url)
        self._node_turn = 0
        self._client: Any = None
        self._conns: Connections | None = None
        self._by_node: dict[str, Connections] = {}  # cluster: node name -> batch connections
        self._max_connections = max_connections
        self._client = self._connect()
        if not self.clustered:
            self._conns = Connections(self._client.connection_pool, max_connections)
        try:
            self._guard(lambda: self._client.script_load(SCRIPT))
        except BaseException:
            self.close()
            raise

    # -- connections -------------------------------------------------------------------------
    def _connect(self) -> Any:
        """A new redis-py client (a cluster client reads the topology, so it may fail)."""
        if not self.clustered:
            return redis_py.Redis.from_url(self._client_url, **self._options)
        try:
            return redis_cluster.RedisCluster.from_url(  # type: ignore[no-untyped-call] # redis-py leaves it untyped
                self._client_url, **self._options
            )
        except (RedisError, RedisClusterException, OSError) as exc:
            raise EngineUnavailable(f"{self.url}: cannot reach the Redis Cluster ({exc})") from exc

    def _cluster(self) -> Any:
        """The client, rebuilt first if an outage invalidated it (cluster only)."""
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _invalidate(self) -> None:
        """Forget a cluster client whose topology may be stale after a failure."""
        if self.clustered:
            self._release_client()

    def _release_client(self) -> None:
        """Drop the client and the batch connections of cluster nodes, and close them."""
        with self._lock:
            client, self._client = self._client, None
            by_node, self._by_node = self._by_node, {}
        for conns in by_node.values():
            conns.close()
        if client is not None:
            _close_client(client)

    def _pubsub_client(self) -> Any:
        if not self.clustered:
            return self._client
        nodes = self._cluster().get_nodes()
        self._node_turn += 1
        node = nodes[self._node_turn % len(nodes)]
        options = {k: v for k, v in self._options.items() if k != "max_connections"}
        return redis_py.Redis(
            host=node.host, port=node.port, ssl=self._client_url.startswith("rediss"), **options
        )

    def _guard(self, call: Callable[[], Any]) -> Any:
        """Run ``call``, turning redis-py failures into memstack errors."""
        if self._closed:
            raise EngineClosed(f"{self.url}: engine is closed")
        try:
            return call()
        except MemstackError:
            raise
        except _unavailable_errors() as exc:
            self._invalidate()
            raise EngineUnavailable(
                f"{self.url}: Redis is unavailable ({type(exc).__name__}: {exc})"
            ) from exc
        except ResponseError as exc:
            raise codec.script_error(str(exc)) from exc
        except RedisError as exc:
            self._invalidate()
            raise EngineUnavailable(f"{self.url}: Redis failed ({type(exc).__name__}: {exc})") from exc

    # -- engine API --------------------------------------------------------------------------
    def execute(self, ops: Sequence[Op]) -> BatchResult:
        """Apply ``ops`` atomically in one script call; see :meth:`Engine.execute`.

        Raises:
            WrongType: a command met a key of another type (nothing applied).
            NotANumber: ``incr``/``hincr`` met a non-number (nothing applied).
            CrossSlot: clustered engine, keys of several slots.
            EngineUnavailable: Redis cannot be reached.
            EngineClosed: after :meth:`close`.
        """
        if self._closed:
            raise EngineClosed(f"{self.url}: engine is closed")
        if not ops:
            return BatchResult(True, [])
        keys, argv, plain = codec.encode(ops, (str(self.now_ms()), *self._head_tail))
        if self.clustered:
            slot = self._check_slots(keys)
            reply = self._guard(lambda: self._run_cluster(keys, argv, ops, slot))
        else:
            conns = cast(Connections, self._conns)  # set for every standalone engine
            reply = self._guard(lambda: self._run(conns, keys, argv))
        return codec.decode(ops, reply, plain)

    def _run(self, conns: Connections, keys: list[str], argv: list[str]) -> str:
        """One request, packed here, on a connection of :mod:`._redis_conns`: redis-py's
        per-argument packing and per-checkout pool checks cost a small batch more than the rest
        of its client side (bench/session_ops.py)."""
        conn = conns.take()
        try:
            try:
                conn.send_packed_command([codec.pack(["EVALSHA", _SHA, str(len(keys)), *keys, *argv])])
                reply: str = conn.read_response()
            except NoScriptError:  # a restarted or flushed server: EVAL caches the script again
                conn.send_packed_command([codec.pack(["EVAL", SCRIPT, str(len(keys)), *keys, *argv])])
                reply = conn.read_response()
        except ResponseError:
            conns.give(conn)  # a complete reply: the connection is clean
            raise
        except BaseException:
            conn.disconnect()  # a request may be half-sent or a reply half-read
            conns.give(conn)
            raise
        conns.give(conn)
        return reply

    def _run_cluster(self, keys: list[str], argv: list[str], ops: Sequence[Op], slot: int | None) -> str:
        client = self._cluster()
        if slot is not None:
            conns = self._node_connections(client.nodes_manager.get_node_from_slot(slot))
            if conns is not None:
                try:
                    return self._run(conns, keys, argv)
                except (MovedError, AskError):
                    # The slot is moving (resharding): nothing ran. The cluster client follows
                    # the redirection below and learns the new slot map from it.
                    pass
        extra: dict[str, Any] = {}
        if not keys:
            # A publish-only batch: the node of the first channel's slot, so that messages of one
            # channel always leave from one node and arrive in order (PUBLISH is broadcast).
            channels = [args[0] for name, args in ops if name == "publish"]
            if channels:
                slot = key_slot(str(channels[0]).encode())
                extra["target_nodes"] = client.nodes_manager.get_node_from_slot(slot)
            else:
                extra["target_nodes"] = client.RANDOM
        try:
            reply: str = client.execute_command("EVALSHA", _SHA, len(keys), *keys, *argv, **extra)
        except NoScriptError:  # a restarted or flushed server: EVAL caches the script again
            reply = client.execute_command("EVAL", SCRIPT, len(keys), *keys, *argv, **extra)
        return reply

    def _check_slots(self, keys: list[str]) -> int | None:
        """The one slot of ``keys`` (None without keys); CrossSlot if they span several."""
        first: tuple[str, int] | None = None
        for key in keys:
            slot = key_slot(key.encode())
            if first is None:
                first = (key, slot)
            elif slot != first[1]:
                _cross_slot(first[0], key)
        return None if first is None else first[1]

    def _node_connections(self, node: Any) -> Connections | None:
        """The batch connections of a cluster node (None until the client connected to it)."""
        conns = self._by_node.get(node.name)
        if conns is None and node.redis_connection is not None:
            with self._lock:
                conns = self._by_node.get(node.name)
                if conns is None:
                    conns = Connections(node.redis_connection.connection_pool, self._max_connections)
                    self._by_node[node.name] = conns
        return conns

    def scan(self, prefix: str) -> Iterator[str]:
        """Live keys starting with ``prefix`` (every primary of a cluster).

        Raises:
            EngineUnavailable: Redis cannot be reached.
        """
        pattern = codec.glob_escape(prefix) + "*"
        now = self.now_ms()

        def collect() -> list[str]:
            if not self.clustered:
                return self._scan_node(self._client, pattern, now)
            cluster = self._cluster()
            found: list[str] = []
            for node in cluster.get_primaries():
                found += self._scan_node(cluster.get_redis_connection(node), pattern, now)
            return found

        return iter(self._guard(collect))

    def _scan_node(self, client: Any, pattern: str, now: int) -> list[str]:
        keys = list(dict.fromkeys(client.scan_iter(match=pattern, count=_SCAN_COUNT)))
        if not keys:
            return []
        pipe = client.pipeline(transaction=False)
        for key in keys:
            pipe.pexpiretime(key)
        expires = pipe.execute()
        return [k for k, e in zip(keys, expires, strict=True) if e == -1 or (e > 0 and e - self._bias > now)]

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        """Call ``callback(message)`` for every message on ``channel`` (see :meth:`Engine.subscribe`).

        Raises:
            EngineUnavailable: Redis did not confirm the subscription in time.
            EngineClosed: after :meth:`close`.
        """
        if self._closed:
            raise EngineClosed(f"{self.url}: engine is closed")
        # Registered only once the listener is past older messages (see Listener.add).
        self._listener.add(channel)
        inner = self._dispatch.subscribe(channel, callback)

        def close() -> None:
            inner.close()
            self._listener.remove(channel)

        return Subscription(close)

    def flush(self) -> None:
        """Delete every key: FLUSHDB, or FLUSHALL on every primary of a cluster.

        Raises:
            EngineUnavailable: Redis cannot be reached.
        """
        if self.clustered:
            self._guard(lambda: self._cluster().flushall(target_nodes=redis_cluster.RedisCluster.PRIMARIES))
        else:
            self._guard(self._client.flushdb)

    def close(self) -> None:
        """Stop the listener and release connections; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._listener.close()
        self._dispatch.close()
        if self._conns is not None:
            self._conns.close()
        self._release_client()


def _close_client(client: Any) -> None:
    """Close a client and every connection pool under it.

    A cluster client's per-node clients are built on explicit pools, which ``close()`` leaves
    open; their sockets would then be closed by the garbage collector (a ResourceWarning).
    """
    pools = [client.connection_pool] if hasattr(client, "connection_pool") else []
    if hasattr(client, "get_nodes"):
        with contextlib.suppress(Exception):  # a broken topology still has to be released
            pools += [n.redis_connection.connection_pool for n in client.get_nodes() if n.redis_connection]
    with contextlib.suppress(Exception):  # a broken client may fail to close; it is dropped anyway
        client.close()
    for pool in pools:
        with contextlib.suppress(Exception):
            pool.disconnect()


def _cross_slot(a: str, b: str) -> NoReturn:
    raise CrossSlot(
        f"keys {a!r} and {b!r} hash to different Redis Cluster slots; keys of one batch must share "
        "a hash tag (Engine.tag(scope))"
    )
