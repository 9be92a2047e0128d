"""The one request path of the Redis engines, standalone and Cluster alike.

A request is one packed write of one or more commands (a pipeline: ``EVALSHA`` alone, or with
``ASKING`` before it / ``WAIT`` after it) and the reading of one reply per command: one round
trip. It runs on a connection of :mod:`.conns` to one node, made by redis-py's public
``Connection`` classes (redis-py's own retries off: the rules below decide).

The retry rules (:func:`may_retry`), at most one retry per call, always on a new connection:

===========================================  =================================================
what failed                                  retried?
===========================================  =================================================
connecting, or writing the request           yes: the server never got a whole request
reading the reply of a read-only request     yes: running it again changes nothing
reading the reply of an idempotent write     yes: the write carries a batch id; the script
                                             answers a repeat with the first run's reply
reading the reply of any other write         no: :class:`EngineUnavailable`, and the call
                                             may have been applied
===========================================  =================================================

After a connection error every idle connection of that node is dropped as well.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Final

import redis as redis_py
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from ...foundation.errors import EngineUnavailable
from ...foundation.forks import renew_in_children
from .codec import pack
from .conns import Connections
from .url import Address, RedisUrl

__all__ = ["Failure", "ReplyLost", "Transport", "Unsent", "may_retry"]

_IO_ERRORS: Final = (RedisConnectionError, RedisTimeoutError, OSError)


class Failure(Exception):
    """A request that failed on the wire (its cause is the redis-py or OS error)."""

    def __init__(self, address: Address, cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.address = address
        self.cause = cause


class Unsent(Failure):
    """Connecting or writing failed: the server never received the whole request."""


class ReplyLost(Failure):
    """The request was written but its reply was not read: it may have run."""


def may_retry(failure: Failure, idempotent: bool) -> bool:
    """Whether a request that failed with ``failure`` may run once more (see the module table).

    ``idempotent``: reads only, or a write whose repeat the server recognises (a batch id).
    """
    return isinstance(failure, Unsent) or idempotent


class Transport:
    """Connections to the nodes of one engine, and the request path over them.

    Args:
        target: the parsed engine URL (connection settings).
        label: names the engine in error messages (its URL).
        keep: most idle connections kept per node.
        socket_timeout: seconds a request may take.
        connect_timeout: seconds connecting may take.
    """

    def __init__(
        self, target: RedisUrl, label: str, keep: int, socket_timeout: float, connect_timeout: float
    ) -> None:
        self.target = target
        self.label = label
        self._keep = keep
        self._settings: dict[str, Any] = {
            "decode_responses": True,
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": connect_timeout,
            # redis-py would resend a request whose reply was lost: only may_retry decides here.
            "retry": Retry(NoBackoff(), 0),
        }
        self._nodes: dict[Address, Connections] = {}
        self._lock = threading.Lock()
        self._closed = False
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """In a forked child: a new lock (connections made before the fork drop themselves, see
        :mod:`.conns`)."""
        self._lock = threading.Lock()

    def _connections(self, address: Address) -> Connections:
        conns = self._nodes.get(address)
        if conns is None:
            with self._lock:
                conns = self._nodes.get(address)
                if conns is None:
                    options = {**self.target.node_options(address), **self._settings}
                    make = _factory(options)
                    conns = Connections(make, self._keep)
                    if self._closed:
                        conns.close()
                    self._nodes[address] = conns
        return conns

    def attempt(self, address: Address, packed: bytes, count: int, fresh: bool = False) -> list[Any]:
        """Write ``packed`` to ``address`` and read ``count`` replies; error replies come back
        as ``ResponseError`` instances (the rest of a pipeline is still read).

        Raises:
            Unsent: connecting or writing failed.
            ReplyLost: a reply could not be read.
        """
        conns = self._connections(address)
        try:
            conn = conns.fresh() if fresh else conns.take()
        except _IO_ERRORS as exc:
            conns.drop_idle()
            raise Unsent(address, exc) from exc
        sent = False
        replies: list[Any] = []
        try:
            conn.send_packed_command([packed], check_health=False)
            sent = True
            for _ in range(count):
                try:
                    replies.append(conn.read_response())
                except ResponseError as exc:  # a complete error reply: the connection stays clean
                    replies.append(exc)
        except _IO_ERRORS as exc:
            _abandon(conns, conn)
            raise (ReplyLost if sent else Unsent)(address, exc) from exc
        except BaseException:
            _abandon(conns, conn)  # a request may be half-sent or a reply half-read
            raise
        conns.give(conn)
        return replies

    def call(
        self,
        route: Callable[[], Address],
        commands: Sequence[Sequence[str]],
        idempotent: bool,
        after_failure: Callable[[Failure], None] | None = None,
    ) -> list[Any]:
        """Run ``commands`` as one pipeline on the node ``route()`` names, retrying as
        :func:`may_retry` allows (``after_failure`` runs before the retry, e.g. to re-read a
        cluster's topology, and ``route`` is asked again).

        Raises:
            EngineUnavailable: the request failed and may not be retried, or failed twice.
        """
        packed = pack(commands[0]) if len(commands) == 1 else b"".join(map(pack, commands))
        failure: Failure | None = None
        sent = False  # some attempt was written whole: it may have run
        for retry in (False, True):
            address = route()
            try:
                return self.attempt(address, packed, len(commands), fresh=retry)
            except Failure as exc:
                failure = exc
                sent = sent or isinstance(exc, ReplyLost)
                if after_failure is not None:
                    after_failure(exc)
                if retry or not may_retry(exc, idempotent):
                    break
        assert failure is not None  # the loop only ends early on a failure
        maybe = "; the call may have been applied" if sent else ""
        host, port = failure.address
        raise EngineUnavailable(
            f"{self.label}: Redis at {host}:{port} is unavailable ({failure}){maybe}"
        ) from failure.cause

    def command(self, address: Address, *args: str) -> Any:
        """One idempotent command on ``address``; an error reply is raised.

        Raises:
            EngineUnavailable: the node cannot be reached.
            redis.exceptions.ResponseError: the server refused the command.
        """
        (reply,) = self.call(lambda: address, [args], idempotent=True)
        if isinstance(reply, ResponseError):
            raise reply
        return reply

    def client(self, address: Address) -> redis_py.Redis:
        """A plain redis-py client on ``address`` with the engine's settings (for pub/sub)."""
        options = {**self.target.node_options(address), **self._settings}
        return redis_py.Redis(connection_pool=redis_py.ConnectionPool(**options))

    def forget(self, address: Address) -> None:
        """Drop the idle connections of ``address`` (a node that failed)."""
        conns = self._nodes.get(address)
        if conns is not None:
            conns.drop_idle()

    def close(self) -> None:
        """Disconnect every idle connection; connections in use close when given back."""
        with self._lock:
            self._closed = True
            nodes = list(self._nodes.values())
        for conns in nodes:
            conns.close()


def _factory(options: dict[str, Any]) -> Callable[[], Any]:
    cls = options.pop("connection_class", redis_py.Connection)
    return lambda: cls(**options)


def _abandon(conns: Connections, conn: Any) -> None:
    """A failed connection: closed (a request may be half-sent or a reply half-read), and the
    node's idle connections with it."""
    conn.disconnect()
    conns.give(conn)
    conns.drop_idle()
