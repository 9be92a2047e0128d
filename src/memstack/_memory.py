"""``Memory``: one engine and every tier built on it."""

from __future__ import annotations

import threading
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .clock import Clock, SystemClock
from .engines import Engine, open_engine

if TYPE_CHECKING:
    from .conversation import ConversationStore, NodeMemory, SlidingWindows, TurnMemory
    from .dream import Dreamer
    from .longterm import LongTermMemory
    from .session import SessionStore
    from .shared import SharedMemory
    from .working import WorkingMemory

__all__ = ["Memory", "open"]


class Memory:
    """Every memory tier on one storage engine. A context manager; ``close()`` closes the engine.

    Tiers are created on first use and share the engine and the clock. Open one with
    :func:`memstack.open`.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._closables: list[Any] = []

    @property
    def clock(self) -> Clock:
        """The clock every tier of this memory uses (the engine's)."""
        return self.engine.clock

    @property
    def url(self) -> str:
        """The engine URL."""
        return self.engine.url

    # -- tiers -------------------------------------------------------------------------------
    @cached_property
    def sessions(self) -> SessionStore:
        """The session state tier (key-value per session, history, counters, TTL)."""
        from .session import SessionStore

        return SessionStore(self.engine)

    @cached_property
    def conversations(self) -> ConversationStore:
        """Conversation threads with branches and token-limited history."""
        from .conversation import ConversationStore

        return ConversationStore(self.engine)

    def node_memory(
        self, app_id: str, conversation_id: str | None, node_id: str, **options: Any
    ) -> NodeMemory:
        """Node-scoped memory of one workflow node inside one conversation (Dify ``002``)."""
        from .conversation import NodeMemory

        return NodeMemory(self.conversations, app_id, conversation_id, node_id, **options)

    @cached_property
    def windows(self) -> SlidingWindows:
        """Sliding-window buffers per workflow session with idle expiry (hetumind / n8n ``004``)."""
        from .conversation import SlidingWindows

        windows = SlidingWindows(self.engine)
        self._closables.append(windows)
        return windows

    @cached_property
    def turns(self) -> TurnMemory:
        """Per-session conversation turns and the turn log (RockBot conversation tier)."""
        from .conversation import TurnMemory

        return TurnMemory(self.engine)

    def long_term(self, scope: str = "default", **options: Any) -> LongTermMemory:
        """Long-term memories of one scope (a user or an agent), searched by BM25 (+ vectors)."""
        from .longterm import LongTermMemory

        return LongTermMemory(self.engine, scope, **options)

    def dream(self, scope: str = "default", **options: Any) -> Dreamer:
        """The dream passes of one long-term scope (``options``: see :class:`memstack.dream.Dreamer`;
        ``embedder``/``profile`` go to the scope). The turn log is this memory's."""
        from .dream import Dreamer

        lt_options = {k: options.pop(k) for k in ("embedder", "profile", "fusion") if k in options}
        options.setdefault("turns", self.turns)
        return Dreamer(self.long_term(scope, **lt_options), **options)

    def working(self, namespace: str, **options: Any) -> WorkingMemory:
        """Working memory bound to ``namespace`` (e.g. ``session/abc``)."""
        from .working import WorkingMemory

        return WorkingMemory(self.engine, namespace, **options)

    def shared(self, name: str, **options: Any) -> SharedMemory:
        """The reactive shared memory called ``name``, seen by every process on this engine."""
        from .shared import SharedMemory

        memory = SharedMemory(self.engine, name, **options)
        self._closables.append(memory)
        return memory

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Stop background work of the tiers and close the engine; idempotent."""
        with self._lock:
            closables, self._closables = self._closables, []
        try:
            for item in reversed(closables):
                item.close()
        finally:
            self.engine.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Memory {self.engine.url!r}>"


def open(url: str | None = None, *, clock: Clock | None = None) -> Memory:  # noqa: A001 - the library's entry point, like io.open
    """Open a :class:`Memory` on the engine at ``url``.

    With no URL, ``$MEMSTACK_URL`` is used, else the embedded SQLite file in the user's data
    directory (``$MEMSTACK_HOME`` overrides it).

    Raises:
        InvalidUrl: unknown scheme or malformed URL.
        EngineUnavailable: the engine cannot be reached.
    """
    return Memory(open_engine(url, clock=clock or SystemClock()))
