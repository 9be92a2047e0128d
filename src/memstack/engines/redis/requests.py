"""Script calls of the Redis engines: one pipelined request per batch, and what each answer means.

The request is ``EVALSHA`` (``EVAL`` once a node says it lost the script), preceded by
``ASKING`` when a migrating slot redirects with ``ASK`` and followed by ``WAIT n ms`` on write
batches when the URL asks for replica acknowledgement: still one round trip. Answers:

* ``MOVED``: the slot has a new owner (nothing ran): the map learns it, the batch goes there.
* ``ASK``: the slot is migrating (nothing ran): once to the importing node, after ``ASKING``.
* ``TRYAGAIN`` (keys of a migrating slot split between two nodes): again, after growing pauses,
  until the migration is over or the socket timeout has passed.
* ``CLUSTERDOWN``, ``MASTERDOWN``, ``READONLY``, ``LOADING``, ``BUSY``: :class:`EngineUnavailable`
  (nothing ran); a cluster re-reads its map.
* ``OOM``: :class:`EngineFull`, nothing applied.
* ``WAIT`` answering fewer replicas than asked after an applied batch: :class:`NotReplicated`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

from redis.exceptions import (
    AskError,
    BusyLoadingError,
    ClusterDownError,
    MasterDownError,
    MovedError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
    TryAgainError,
)

from ...foundation.errors import EngineFull, EngineUnavailable, NotReplicated
from . import codec
from .cluster import Topology
from .lua import SCRIPT
from .transport import Failure, Transport
from .url import Address

__all__ = ["SCRIPT_TEXT", "Call", "ScriptRunner", "head"]

SCRIPT_TEXT: Final = SCRIPT
"""The batch script; it keeps the batch-dedupe contract itself (``ARGV[4]``, the last key)."""
_SHA: Final = hashlib.sha1(SCRIPT_TEXT.encode()).hexdigest()
_REDIRECTS: Final = 5
_PIPELINE: Final = 500
"""Most script calls sent in one pipeline by :meth:`ScriptRunner.run_many`."""
_TRYAGAIN_FIRST_S: Final = 0.005
_TRYAGAIN_MAX_S: Final = 0.1
# redis-py's classes of CLUSTERDOWN, MASTERDOWN, READONLY and LOADING (it strips the code).
_OUTAGES: Final = (ClusterDownError, MasterDownError, ReadOnlyError, BusyLoadingError)


Call = tuple[list[str], list[str], int | None, bool]
"""One batch's script call as :meth:`ScriptRunner.run` takes it: keys, arguments, slot, write."""


def head(now_ms: int, bias: str, probe: str, dedupe_ttl_ms: str) -> tuple[str, ...]:
    """The script's first arguments: ``now_ms, bias, probe, dedupe TTL ms or ''``."""
    return (str(now_ms), bias, probe, dedupe_ttl_ms)


class ScriptRunner:
    """Runs script calls on a transport, following cluster redirections.

    Args:
        transport: the request path.
        topology: the cluster's slot map (None: a standalone server).
        wait_replicas: replicas that must acknowledge each write batch (0: no ``WAIT``).
        wait_ms: the ``WAIT`` timeout.
        patience: seconds a batch waits for a slot migration to finish (``TRYAGAIN``).
    """

    def __init__(
        self,
        transport: Transport,
        topology: Topology | None,
        wait_replicas: int,
        wait_ms: int,
        patience: float,
    ) -> None:
        self._transport = transport
        self._topology = topology
        self._standalone = transport.target.startup_nodes[0]
        self._wait = ("WAIT", str(wait_replicas), str(wait_ms)) if wait_replicas else None
        self._replicas = wait_replicas
        self._patience = patience

    def _route_standalone(self) -> Address:
        return self._standalone

    def script_load(self, address: Address) -> None:
        """Cache the script on ``address`` (first use; a node that lost it gets ``EVAL``)."""
        self._transport.command(address, "SCRIPT", "LOAD", SCRIPT_TEXT)

    def run(self, keys: list[str], argv: list[str], slot: int | None, write: bool, idempotent: bool) -> str:
        """The script's reply to one batch (``slot``: the batch's, None for any node).

        Raises:
            EngineUnavailable: the request failed and could not be retried safely, or the
                cluster cannot serve the slot right now.
            EngineFull: Redis is out of memory (nothing applied).
            NotReplicated: the batch applied, but fewer replicas than asked acknowledged it.
            WrongType, NotANumber, EngineError: the script refused the batch (nothing applied).
        """
        wait = self._wait if write else None
        evalsha = True
        ask: Address | None = None
        redirects = 0
        pause, deadline = _TRYAGAIN_FIRST_S, 0.0
        while True:
            script = ("EVALSHA", _SHA) if evalsha else ("EVAL", SCRIPT_TEXT)
            commands: list[Sequence[str]] = [] if ask is None else [("ASKING",)]
            commands.append((*script, str(len(keys)), *keys, *argv))
            if wait is not None:
                commands.append(wait)
            replies = self._call(commands, slot, ask, idempotent)
            reply = replies[len(commands) - (2 if wait else 1)]
            asked, ask = ask, None
            if not isinstance(reply, ResponseError):
                if wait is not None and reply[:5] == "[true":  # applied: the codec's JSON reply
                    self._check_replicas(replies[-1])
                return str(reply)
            if isinstance(reply, TryAgainError):
                # A multi-key request on a slot in migration (the batch id is one more key): the
                # slot's keys are split between two nodes until the migration finishes.
                now = time.monotonic()
                deadline = deadline or now + self._patience
                if now + pause > deadline:
                    raise EngineUnavailable(
                        f"{self._transport.label}: slot {slot} stayed in migration for "
                        f"{self._patience:g} s (TRYAGAIN); nothing applied"
                    )
                time.sleep(pause)
                pause = min(pause * 2, _TRYAGAIN_MAX_S)
                ask = asked  # the importing node again: it serves the batch once the keys are in
                continue
            redirects += 1
            if redirects > _REDIRECTS:
                raise EngineUnavailable(f"{self._transport.label}: slot {slot} kept moving ({reply})")
            if isinstance(reply, NoScriptError):
                evalsha = False
            elif isinstance(reply, MovedError) and self._topology is not None:
                self._topology.moved(reply.slot_id, (reply.host, int(reply.port)))
            elif isinstance(reply, AskError) and self._topology is not None:
                ask = (reply.host, int(reply.port))
            else:
                self._refuse(reply, slot)

    def run_many(self, calls: Sequence[Call]) -> list[str]:
        """The script's replies to independent batches (each as :meth:`run` gives it), sent as
        pipelines of at most :data:`_PIPELINE` calls, one node after the other: one round trip per
        node where :meth:`run` takes one per batch. A call answered with an error (a redirection, a
        lost script, a migrating slot, a refusal) nothing ran of goes again alone through
        :meth:`run`, which follows or raises it, as it would have alone; the calls after it in the
        pipeline have run. Under ``wait_replicas`` each call is sent alone (its own ``WAIT``).

        Raises:
            EngineUnavailable, EngineFull, NotReplicated, WrongType, NotANumber, EngineError: as
                :meth:`run`, for the first call that fails.
        """
        if self._wait is not None:
            return [self.run(*call, idempotent=True) for call in calls]
        replies: list[str] = [""] * len(calls)
        by_node: dict[Address, list[int]] = {}
        for n, (_, _, slot, _) in enumerate(calls):
            by_node.setdefault(self._node_of(slot), []).append(n)
        for numbers in by_node.values():
            for start in range(0, len(numbers), _PIPELINE):
                chunk = numbers[start : start + _PIPELINE]
                commands: list[Sequence[str]] = [
                    ("EVALSHA", _SHA, str(len(calls[n][0])), *calls[n][0], *calls[n][1]) for n in chunk
                ]
                # Routed by a slot of the chunk (after a failure, to its owner in the new map).
                slot = next((calls[n][2] for n in chunk if calls[n][2] is not None), None)
                answers = self._call(commands, slot, None, idempotent=True)
                for n, answer in zip(chunk, answers, strict=True):
                    ok = not isinstance(answer, ResponseError)
                    replies[n] = str(answer) if ok else self.run(*calls[n], idempotent=True)
        return replies

    def _node_of(self, slot: int | None) -> Address:
        if self._topology is None:
            return self._standalone
        return self._topology.any_primary() if slot is None else self._topology.node(slot)

    def _call(
        self, commands: list[Sequence[str]], slot: int | None, ask: Address | None, idempotent: bool
    ) -> list[Any]:
        topology = self._topology
        if topology is None:
            return self._transport.call(self._route_standalone, commands, idempotent)
        version = topology.version
        route: Callable[[], Address]
        if ask is not None:
            target = ask
            route = lambda: target  # noqa: E731 - a one-shot route to the importing node
        elif slot is None:
            route = topology.any_primary
        else:
            route = lambda: topology.node(slot)  # noqa: E731 - the slot's owner at each attempt

        def after_failure(failure: Failure) -> None:
            topology.failed(failure, version)

        return self._transport.call(route, commands, idempotent, after_failure)

    def _refuse(self, reply: ResponseError, slot: int | None) -> NoReturn:
        """Raise the memstack error for an error reply."""
        label = self._transport.label
        message = str(reply)
        if isinstance(reply, OutOfMemoryError) or "OOM command not allowed" in message:
            raise EngineFull(f"{label}: Redis is out of memory (maxmemory); nothing applied ({message})")
        if isinstance(reply, _OUTAGES) or message.startswith("BUSY "):
            if self._topology is not None:
                self._topology.refresh(self._topology.version)
            raise EngineUnavailable(f"{label}: Redis cannot serve slot {slot} ({message}); nothing applied")
        raise codec.script_error(message)

    def _check_replicas(self, reply: Any) -> None:
        if isinstance(reply, ResponseError) or int(reply) < self._replicas:
            raise NotReplicated(
                f"{self._transport.label}: the batch applied on the primary but {reply} of "
                f"wait_replicas={self._replicas} replicas acknowledged it in time; a failover may lose it"
            )
