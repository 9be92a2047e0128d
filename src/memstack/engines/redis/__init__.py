"""The Redis engines: standalone (``redis://``, ``rediss://``, ``unix://``) and Cluster
(``redis+cluster://``, ``rediss+cluster://``).

Every :meth:`RedisEngine.execute` is one ``EVALSHA`` of the script in :mod:`.lua`: one
round trip, atomic, interpreted on the server with the semantics of the memory engine. Time
comes from the engine clock: a key's physical expire-time is its logical one plus a bias. On the
system clock the bias is -1 ms and Redis expires keys itself (it drops a key when ``now > at``,
the seam when ``now >= at``, hence the millisecond); on any other clock it is 100 years, and the
script purges keys the engine clock says are dead before it touches them, so a manual clock alone
decides when keys die.

Requests travel the one transport of :mod:`.transport` (connections, retry rules);
:mod:`.requests` builds script calls (batch ids of :mod:`.dedupe`, ``WAIT``) and
follows a cluster's redirections; :mod:`.cluster` keeps the slot map; URLs are read by
:mod:`.url`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import Any, Final, NoReturn

import redis as redis_py
from redis.crc import key_slot
from redis.exceptions import ResponseError

from ...foundation.clock import Clock, SystemClock
from ...foundation.errors import CrossSlot, EngineClosed, EngineError, InvalidUrl
from ...foundation.redact import redact_url
from .._checks import check_ops
from .._dispatch import Dispatcher
from .._once import scan_once
from ..base import SCAN_PAGE, BatchResult, Engine, Op, Subscription, check_page, started
from . import codec
from .cluster import Topology
from .dedupe import dedupe_key, is_dedupe_key
from .pubsub import Listener
from .raw import drop_replies, node_items, reply_items
from .requests import Call, ScriptRunner, head
from .transport import Transport
from .url import Address, parse

__all__ = ["MANUAL_CLOCK_BIAS_MS", "SYSTEM_CLOCK_BIAS_MS", "RedisEngine"]

MANUAL_CLOCK_BIAS_MS: Final = 100 * 36525 * 86_400_000 // 100
"""Added to physical expire-times under a non-system clock (100 years, in ms)."""
SYSTEM_CLOCK_BIAS_MS: Final = -1
"""Added to physical expire-times under the system clock: Redis keeps a key alive at ``now == at``."""

_PUBSUB_SLOT: Final = 0


class RedisEngine(Engine):
    """An engine on a Redis server or a Redis Cluster.

    Args:
        url: ``redis://host:port/db``, ``rediss://…``, ``unix:///path?db=N`` or
            ``redis+cluster://host:port[,host:port…]`` / ``rediss+cluster://…`` (any nodes of the
            cluster: every node learned later is remembered too). ``?wait_replicas=N&wait_ms=M``
            runs ``WAIT N M`` after each write batch (see :mod:`.requests`).
        clock: time source for TTLs (default: the system clock).
        socket_timeout: seconds one request may take before :class:`EngineUnavailable`.
        connect_timeout: seconds a connection attempt may take.
        max_connections: most idle connections kept per node.

    A call that fails with :class:`EngineUnavailable` after its request was sent may have been
    applied. The engine itself resends a request only when that is safe: it was never fully
    sent, it only reads, or it is a write batch carrying a batch id (the script answers a repeat
    with the first reply for :attr:`dedupe_ttl_ms`). Callers that retry on their own make a
    retry safe with their own idempotency keys: a ``message_id`` for conversation appends (a
    repeat raises ``AlreadyExists``), the engine's batch id for everything else.

    Raises:
        InvalidUrl: not a Redis URL, or a malformed one (hosts, ports, query parameters).
        EngineUnavailable: the server cannot be reached.
    """

    scan_repeats = True

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
        target = parse(url)
        if target.wait_replicas and target.wait_ms >= socket_timeout * 1000:
            raise InvalidUrl(
                f"engine URL {redact_url(url)!r}: wait_ms={target.wait_ms} must be below the socket timeout "
                f"({socket_timeout * 1000:g} ms)"
            )
        self.clustered = target.clustered
        self.name = "redis-cluster" if self.clustered else "redis"
        system = isinstance(self.clock, SystemClock)
        self._bias = SYSTEM_CLOCK_BIAS_MS if system else MANUAL_CLOCK_BIAS_MS
        # Under the system clock Redis' own expiry is the engine's: no per-key probe is needed.
        self._bias_text, self._probe = str(self._bias), "" if system else "1"
        self.dedupe_ttl_ms = int(2000 * (socket_timeout + connect_timeout))
        """How long a write batch's id is remembered: twice the longest a request and its
        reconnection can take, so a retry always finds it."""
        self._dedupe_ttl_text = str(self.dedupe_ttl_ms)
        self._wait = socket_timeout + connect_timeout
        self._closed = False
        self._transport = Transport(target, redact_url(url), max_connections, socket_timeout, connect_timeout)
        self._dispatch = Dispatcher(self.name)
        self._listener = Listener(self._pubsub_client, self._dispatch, self._wait, redact_url(url))
        self._topology: Topology | None = None
        try:
            if self.clustered:
                self._topology = Topology(self._transport, target.startup_nodes)
            self._runner = ScriptRunner(
                self._transport, self._topology, target.wait_replicas, target.wait_ms, socket_timeout
            )
            for address in self._nodes():
                self._guard(partial(self._runner.script_load, address))
        except BaseException:
            self.close()
            raise

    # -- nodes ---------------------------------------------------------------------------------
    def _nodes(self) -> list[Address]:
        """Every primary (the one server of a standalone engine)."""
        if self._topology is None:
            return [self._transport.target.startup_nodes[0]]
        return self._topology.primaries()

    def _pubsub_client(self) -> redis_py.Redis:
        # A cluster broadcasts PUBLISH over its bus, which orders nothing between nodes. Every
        # engine listens on, and publishes its publish-only batches to, one node: that of slot 0.
        topology = self._topology
        node = self._transport.target.startup_nodes[0] if topology is None else topology.node(_PUBSUB_SLOT)
        return self._transport.client(node)

    def _guard(self, call: Callable[[], Any]) -> Any:
        """Run ``call``, turning refusals of admin commands into memstack errors."""
        if self._closed:
            raise EngineClosed(f"{redact_url(self.url)}: engine is closed")
        try:
            return call()
        except ResponseError as exc:
            raise EngineError(f"{redact_url(self.url)}: Redis refused a command ({exc})") from exc

    def _admin(self, node: Address, *commands: Sequence[str]) -> list[Any]:
        """Idempotent commands (one pipeline) on one node; an error reply is raised. A failure
        makes a cluster re-read its slot map, so the next call sees the current primaries.

        Raises:
            EngineUnavailable: the node cannot be reached.
            redis.exceptions.ResponseError: the node refused a command.
        """
        topology = self._topology
        after = None if topology is None else partial(topology.failed, version=topology.version)
        replies = self._transport.call(lambda: node, commands, idempotent=True, after_failure=after)
        for reply in replies:
            if isinstance(reply, ResponseError):
                raise reply
        return replies

    # -- engine API --------------------------------------------------------------------------
    def execute(self, ops: Sequence[Op]) -> BatchResult:
        """Apply ``ops`` atomically in one script call; see :meth:`Engine.execute`.

        Raises:
            WrongType: a command met a key of another type (nothing applied).
            NotANumber: ``incr``/``hincr`` met a non-number (nothing applied).
            CrossSlot: clustered engine, keys of several slots.
            EngineFull: Redis is out of memory (nothing applied).
            NotReplicated: ``wait_replicas`` asked for more replicas than acknowledged the write.
            EngineUnavailable: Redis cannot be reached (a write may have been applied).
            EngineClosed: after :meth:`close`.
        """
        if self._closed:
            raise EngineClosed(f"{redact_url(self.url)}: engine is closed")
        if not ops:
            return BatchResult(True, [])
        call, plain = self._call_of(ops)
        return codec.decode(ops, self._runner.run(*call, idempotent=True), plain)

    def execute_many(self, batches: Sequence[Sequence[Op]]) -> list[BatchResult]:
        """Apply each batch atomically (see :meth:`Engine.execute_many`): every batch is checked
        before any is sent, then they go as one pipeline per node (see
        :meth:`.requests.ScriptRunner.run_many`).

        Raises:
            What :meth:`execute` raises; a malformed batch or one across slots before any applied.
        """
        if self._closed:
            raise EngineClosed(f"{redact_url(self.url)}: engine is closed")
        prepared = [self._call_of(ops) if ops else None for ops in batches]
        replies = iter(self._runner.run_many([p[0] for p in prepared if p is not None]))
        return [
            BatchResult(True, []) if p is None else codec.decode(ops, next(replies), p[1])
            for ops, p in zip(batches, prepared, strict=True)
        ]

    def _call_of(self, ops: Sequence[Op]) -> tuple[Call, bool]:
        """The script call of a batch (keys, arguments, slot, write) and whether its reply is plain."""
        # Checked before anything else reads the ops: a malformed op is an InvalidInput here too.
        write = check_ops(ops, guards_first=False)
        ttl = self._dedupe_ttl_text if write else ""
        keys, argv, plain = codec.encode(
            ops, head(self.now_ms(), self._bias_text, self._probe, ttl), checked=True
        )
        slot = None
        if self.clustered:
            slot = self._check_slots(keys)
            if slot is None and write:
                # A publish-only batch: on the node of the listeners (see _pubsub_client), so
                # that they get its messages first-hand, in order, before the call returns.
                slot = _PUBSUB_SLOT
        if write:
            keys.append(dedupe_key(slot))
        return (keys, argv, slot, write), plain

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

    def scan(self, prefix: str) -> Iterator[str]:
        """Live keys starting with ``prefix`` (every primary of a cluster), each once, in bounded
        memory (see :mod:`.._once`), read as the caller iterates; never the engine's own batch ids.

        Raises:
            EngineUnavailable: Redis cannot be reached (at the call, or while iterating).
        """
        return scan_once(partial(self.scan_pages, prefix))

    def scan_pages(self, prefix: str, page: int = SCAN_PAGE) -> Iterator[list[str]]:
        """See :meth:`Engine.scan_pages`: a page is one ``SCAN`` step (``COUNT page``) of one
        primary, so it may hold a few more or fewer keys than ``page``, and a key may come twice
        (:attr:`scan_repeats`).

        Raises:
            InvalidInput: ``page`` is not a positive integer.
            EngineUnavailable: Redis cannot be reached.
        """
        check_page(page)
        pattern = codec.glob_escape(prefix) + "*"
        now = self.now_ms()

        def pages() -> Iterator[list[str]]:
            for node in self._guard(self._nodes):
                cursor = "0"
                while True:
                    step = partial(self._scan_step, node, pattern, cursor, now, str(page))
                    cursor, live = self._guard(step)
                    if live:
                        yield live
                    if cursor == "0":
                        break

        return started(pages())

    def _scan_step(
        self, node: Address, pattern: str, cursor: str, now: int, count: str
    ) -> tuple[str, list[str]]:
        """One ``SCAN`` step on ``node``: the next cursor and the live keys it found."""
        ((cursor, batch),) = self._admin(node, ("SCAN", cursor, "MATCH", pattern, "COUNT", count))
        fresh = [k for k in dict.fromkeys(batch) if not is_dedupe_key(k)]
        if not fresh:
            return cursor, []
        # Each page's expiries in a pipeline of its own: one of a million keys' timed out writing
        # to the socket (bench/scale.py --scopes 100000 on Redis).
        expires = self._admin(node, *(("PEXPIRETIME", k) for k in fresh))
        live = [k for k, e in zip(fresh, expires, strict=True) if e == -1 or (e > 0 and e - self._bias > now)]
        return cursor, live

    def raw_items(self) -> Iterator[tuple[str, str]]:
        """Every key of every primary with its content, batch replies included (see
        :mod:`.raw`); read node by node as the caller iterates.

        Raises:
            EngineUnavailable: Redis cannot be reached.
        """
        for node in self._guard(self._nodes):
            yield from node_items(self._admin, node)

    def internal_items(self) -> Iterator[tuple[str, str]]:
        """The stored batch replies (``ms:batch:…``) of every primary.

        Raises:
            EngineUnavailable: Redis cannot be reached.
        """
        for node in self._guard(self._nodes):
            yield from reply_items(self._admin, node)

    def drop_internal(self, wheres: Iterable[str]) -> int:
        """Withdraw the named batch replies (see :func:`.raw.drop_replies`).

        Raises:
            EngineUnavailable: Redis cannot be reached.
        """
        topology = self._topology
        first = self._transport.target.startup_nodes[0]

        def node_of(key: str) -> Address:
            return first if topology is None else topology.node(key_slot(key.encode()))

        return int(self._guard(partial(drop_replies, self._admin, node_of, list(wheres))))

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        """Call ``callback(message)`` for every message on ``channel`` (see :meth:`Engine.subscribe`).

        Raises:
            EngineUnavailable: Redis did not confirm the subscription in time.
            EngineClosed: after :meth:`close`.
        """
        if self._closed:
            raise EngineClosed(f"{redact_url(self.url)}: engine is closed")
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
        command = "FLUSHALL" if self.clustered else "FLUSHDB"
        for node in self._guard(self._nodes):
            self._guard(partial(self._admin, node, (command,)))

    def close(self) -> None:
        """Stop the listener and release connections; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._listener.close()
        self._dispatch.close()
        self._transport.close()


def _cross_slot(a: str, b: str) -> NoReturn:
    raise CrossSlot(
        f"keys {a!r} and {b!r} hash to different Redis Cluster slots; keys of one batch must share "
        "a hash tag (Engine.tag(scope))"
    )
