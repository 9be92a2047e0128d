"""The slot map of a Redis Cluster, as the engine's transport routes by it.

The map is read with ``CLUSTER SLOTS`` from any node the engine knows: the URL's startup nodes and every
node (primary or replica) any answer named since. Nodes are never forgotten, so losing the node
named in the URL costs nothing once the cluster has failed over: the map is re-read from another.
A re-read happens after a request failed on the wire (the failed node is asked last), when a
slot has no node, and a ``MOVED`` answer updates its one slot at once.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from redis.exceptions import ResponseError

from ...foundation.errors import EngineUnavailable
from ...foundation.forks import renew_in_children
from .codec import pack
from .transport import Failure, Transport
from .url import Address

__all__ = ["SLOTS", "Topology"]

SLOTS: Final = 16384
_ASK_MAP: Final = pack(["CLUSTER", "SLOTS"])


class Topology:
    """Which node serves which slot.

    Args:
        transport: asks the nodes.
        startup_nodes: the nodes named in the URL.
        monotonic: seconds, to ask nodes that failed most recently last.

    Raises:
        EngineUnavailable: (on creation) no startup node answered ``CLUSTER SLOTS``.
    """

    def __init__(
        self,
        transport: Transport,
        startup_nodes: tuple[Address, ...],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._transport = transport
        self._now = monotonic
        self._failed: dict[Address, float] = dict.fromkeys(startup_nodes, 0.0)  # node -> when it last failed
        self._slots: list[Address | None] = [None] * SLOTS
        self._primaries: list[Address] = []
        self._turn = itertools.count()
        self._lock = threading.Lock()
        self.version = 0
        """Bumped by every re-read: a failure seen under an older version needs no re-read."""
        self.refresh(0)
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """In a forked child: a new lock (a parent thread re-reading the map at the fork holds its own)."""
        self._lock = threading.Lock()

    @property
    def known(self) -> list[Address]:
        """Every node learned so far, startup nodes first."""
        return list(self._failed)

    def node(self, slot: int) -> Address:
        """The primary serving ``slot``.

        Raises:
            EngineUnavailable: no node serves it, even after re-reading the map.
        """
        address = self._slots[slot]
        if address is None:
            self.refresh(self.version)
            address = self._slots[slot]
            if address is None:
                raise EngineUnavailable(f"{self._transport.label}: no Redis Cluster node serves slot {slot}")
        return address

    def any_primary(self) -> Address:
        """A primary, in turn (for requests without a key)."""
        primaries = self._primaries
        if not primaries:
            raise EngineUnavailable(f"{self._transport.label}: the Redis Cluster has no primary")
        return primaries[next(self._turn) % len(primaries)]

    def primaries(self) -> list[Address]:
        """Every primary, once."""
        return list(self._primaries)

    def moved(self, slot: int, address: Address) -> None:
        """A ``MOVED`` answer: ``slot`` is served by ``address`` now."""
        self._failed.setdefault(address, 0.0)
        self._slots[slot] = address

    def failed(self, failure: Failure, version: int) -> None:
        """A request failed on the wire under map ``version``: re-read the map (once for every
        request that saw the same version)."""
        self._failed[failure.address] = self._now()
        self._transport.forget(failure.address)
        # The request reports its own failure; the next one tries the map again.
        with contextlib.suppress(EngineUnavailable):
            self.refresh(version)

    def refresh(self, version: int) -> None:
        """Re-read the map from the first node that answers, unless it changed since ``version``.

        Raises:
            EngineUnavailable: no known node answered.
        """
        with self._lock:
            if version != self.version:
                return
            problems: list[str] = []
            # A copy: other threads note failures and MOVED answers without the lock.
            for address, _ in sorted(list(self._failed.items()), key=lambda item: item[1]):
                try:
                    (reply,) = self._transport.attempt(address, _ASK_MAP, 1)
                except Failure as exc:
                    self._failed[address] = self._now()
                    problems.append(f"{address[0]}:{address[1]}: {exc}")
                    continue
                if isinstance(reply, ResponseError) or not reply:
                    problems.append(f"{address[0]}:{address[1]}: {reply or 'no slots'}")
                    continue
                self._read(address, reply)
                self.version += 1
                return
            raise EngineUnavailable(
                f"{self._transport.label}: no Redis Cluster node answered ({'; '.join(problems)})"
            )

    def _read(self, asked: Address, reply: list[Any]) -> None:
        slots: list[Address | None] = [None] * SLOTS
        primaries: dict[Address, None] = {}
        for start, end, primary, *replicas in reply:
            address = self._learn(asked, primary)
            slots[start : end + 1] = [address] * (end - start + 1)
            primaries[address] = None
            for replica in replicas:
                self._learn(asked, replica)
        self._slots = slots
        self._primaries = list(primaries)

    def _learn(self, asked: Address, node: list[Any]) -> Address:
        host, port = str(node[0]), int(node[1])
        # An empty or "?" endpoint means "the address you reached me on" (CLUSTER SLOTS docs).
        address = (asked[0] if host in ("", "?") else host, port)
        self._failed.setdefault(address, 0.0)
        return address
