"""Networks: agents that run together share one memory; an agent alone has its own.

``Network(mem_or_engine, "pipeline").memory`` is the shared memory named ``network.pipeline``;
every change it publishes carries ``network_name="pipeline"``. ``network.agent("writer")`` is the
same memory seen by one agent (its writes carry ``writer="writer"``). An agent outside any
network uses ``Network.agent_memory(engine, "writer")``: the memory named ``agent.writer``.
Names follow :data:`memstack.tiers.shared.serialize.NAME_RULE`.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from ...engines import Engine
from ...foundation.closing import Closing
from ...foundation.forks import renew_in_children
from .serialize import check_name
from .store import SharedMemory

__all__ = ["Network"]


class _OnEngine(Protocol):
    """Anything built on an engine, such as a :class:`memstack.Memory` (which sits above this tier)."""

    @property
    def engine(self) -> Engine: ...


def _engine_of(source: Engine | _OnEngine) -> Engine:
    return source if isinstance(source, Engine) else source.engine


class Network(Closing):
    """The network ``name`` on an engine (or a :class:`memstack.Memory`'s engine).

    Raises:
        InvalidKey: a bad network name.
    """

    def __init__(self, source: Engine | _OnEngine, name: str, **options: Any) -> None:
        self.engine = _engine_of(source)
        self.name = check_name(name, "network name")
        self._options = options
        self._lock = threading.Lock()
        self._opened: list[SharedMemory] = []
        self._memory: SharedMemory | None = None
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """In a forked child: a new lock (a parent thread held it while opening a memory)."""
        self._lock = threading.Lock()

    @property
    def memory_name(self) -> str:
        """The shared memory name of this network (``network.{name}``)."""
        return f"network.{self.name}"

    @property
    def memory(self) -> SharedMemory:
        """The network's shared memory (one instance per :class:`Network`)."""
        with self._lock:
            if self._memory is None:
                self._memory = self._open(None)
            return self._memory

    def agent(self, agent_name: str) -> SharedMemory:
        """The network's memory as seen by agent ``agent_name`` (writes carry it as writer)."""
        with self._lock:
            return self._open(check_name(agent_name, "agent name"))

    def _open(self, writer: str | None) -> SharedMemory:
        memory = SharedMemory(
            self.engine, self.memory_name, writer=writer, network_name=self.name, **self._options
        )
        self._opened.append(memory)
        return memory

    def reset_memory(self) -> None:
        """Reset the shared memory between runs (see :meth:`SharedMemory.reset`)."""
        self.memory.reset()

    @staticmethod
    def agent_memory(source: Engine | _OnEngine, agent_name: str, **options: Any) -> SharedMemory:
        """The own memory of an agent outside any network (``agent.{agent_name}``)."""
        name = check_name(agent_name, "agent name")
        return SharedMemory(_engine_of(source), f"agent.{name}", writer=name, **options)

    def close(self) -> None:
        """Close every memory this network opened; idempotent."""
        with self._lock:
            opened, self._opened, self._memory = self._opened, [], None
        for memory in opened:
            memory.close()

    def __repr__(self) -> str:
        return f"<Network {self.name!r} on {self.engine!r}>"
