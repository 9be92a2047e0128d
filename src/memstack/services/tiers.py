"""``Tiers``: one engine and every tier built on it (what a :class:`memstack.Memory` is made of).

The memory's construction sits below the lifecycle services (dream, forget, retention), which
work on it; :class:`memstack.Memory` (:mod:`memstack.services.memory`, above them) adds those services.
So nothing imports upward and there is no import circle (the import-graph test checks it).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final, TypedDict

from ..engines import Engine
from ..engines.prefixed import PrefixedEngine
from ..foundation.clock import Clock
from ..foundation.closing import Closing
from ..foundation.errors import InvalidConfiguration
from ..foundation.keyspace import split_tenant
from ..foundation.limits import short_repr

if TYPE_CHECKING:
    from ..compat.dify import NodeMemory
    from ..compat.n8n import SlidingWindows
    from ..search.embedders import Embedder
    from ..tiers.conversation import ConversationStore, TurnMemory
    from ..tiers.longterm import LongTermMemory
    from ..tiers.longterm.backfill import VectorFollower
    from ..tiers.session import SessionStore
    from ..tiers.shared import SharedMemory
    from ..tiers.working import WorkingMemory

__all__ = ["CLOSE_WAIT", "SCOPES_KEPT", "TierOptions", "Tiers"]

SCOPES_KEPT: Final = 1024
"""Long-term scopes a :class:`Memory` keeps built (see :meth:`Memory.long_term`)."""
CLOSE_WAIT: Final = 10.0
"""Seconds :meth:`Tiers.close` spends at most finishing queued vector computations; the rest is
handed over (the entries wait for a vector, which any process with an embedder fills in)."""


class TierOptions(TypedDict, total=False):
    """The keyword arguments of :class:`Tiers` after the engine (what :class:`memstack.Memory` passes on)."""

    embedder: Embedder | str | None
    root: Engine | None
    follow: bool


class Tiers(Closing):
    """Every memory tier on one storage engine. A context manager; ``close()`` closes the engine.

    Tiers are created on first use and share the engine and the clock. :class:`memstack.Memory`
    is this with the lifecycle services; open one with :func:`memstack.open`.

    Args:
        engine: the engine (or a tenant's view of one) every tier uses.
        embedder: the retrieval setting of the long-term scopes: an
            :class:`~memstack.search.embedders.Embedder`, a setting text (``"local"``, ``"none"``...,
            resolved as :func:`memstack.open` resolves it) or None (BM25 alone).
        root: the engine ``engine`` is a view of, when this memory owns it: closed with the memory.
        follow: with an embedder, fill in the vectors of entries written without one by any process
            (a :class:`~memstack.tiers.longterm.backfill.VectorFollower` over ``engine``, on a thread).

    Raises:
        InvalidConfiguration: ``engine`` is not an engine (a URL text: open it with
            :func:`memstack.open`), or a bad ``embedder`` setting.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        embedder: Embedder | str | None = None,
        root: Engine | None = None,
        follow: bool = False,
    ) -> None:
        if not isinstance(engine, Engine):
            # memstack.Memory("sqlite:///m.db") otherwise fails far from here, on first use
            raise InvalidConfiguration(
                f"engine {short_repr(engine)}: must be an Engine; open a URL with memstack.open(url)"
            )
        embedder = _embedder_of(embedder)
        self.engine = engine
        self.embedder = embedder
        self._root = root
        self._lock = threading.Lock()
        self._closables: list[Any] = []
        self._scopes: OrderedDict[str, LongTermMemory] = OrderedDict()
        self._long_terms: weakref.WeakSet[LongTermMemory] = weakref.WeakSet()
        self._follower: VectorFollower | None = None
        if follow and embedder is not None:
            from ..tiers.longterm.backfill import VectorFollower

            self._follower = VectorFollower(engine, embedder)
            self._follower.start()

    @property
    def tenant(self) -> str | None:
        """The tenant whose data this memory sees (``t:{tenant}:…`` keys), or None for the raw
        engine-wide keyspace."""
        if not isinstance(self.engine, PrefixedEngine):
            return None
        tenant, rest = split_tenant(self.engine.prefix)
        return tenant if not rest else None

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
        from ..tiers.session import SessionStore

        return SessionStore(self.engine)

    @cached_property
    def conversations(self) -> ConversationStore:
        """Conversation threads with branches and token-limited history."""
        from ..tiers.conversation import ConversationStore

        return ConversationStore(self.engine)

    def node_memory(
        self, app_id: str, conversation_id: str | None, node_id: str, **options: Any
    ) -> NodeMemory:
        """Node-scoped memory of one workflow node inside one conversation (Dify ``002``)."""
        from ..compat.dify import NodeMemory

        return NodeMemory(self.conversations, app_id, conversation_id, node_id, **options)

    @cached_property
    def windows(self) -> SlidingWindows:
        """Sliding-window buffers per workflow session with idle expiry (hetumind / n8n ``004``)."""
        from ..compat.n8n import SlidingWindows

        windows = SlidingWindows(self.engine)
        self._closables.append(windows)
        return windows

    @cached_property
    def turns(self) -> TurnMemory:
        """Per-session conversation turns and the turn log (RockBot conversation tier)."""
        from ..tiers.conversation import TurnMemory

        return TurnMemory(self.engine)

    def long_term(self, scope: str = "default", **options: Any) -> LongTermMemory:
        """Long-term memories of one scope (a user or an agent), searched by BM25 (+ vectors).

        Without ``options`` the scope uses this memory's :attr:`embedder` and is kept (the last
        :data:`SCOPES_KEPT` scopes), so its background vector worker is shared by every caller.
        ``options`` go to :class:`~memstack.tiers.longterm.LongTermMemory` (``embedder`` defaults to
        :attr:`embedder`; a setting text such as ``"none"`` or ``"local"`` is resolved as
        :func:`memstack.open` resolves it).

        Raises:
            InvalidKey: a bad scope.
            InvalidConfiguration: a bad option.
        """
        from ..tiers.longterm import LongTermMemory

        if options:
            embedder = options.get("embedder", self.embedder)
            if isinstance(embedder, str):
                from ..search.embedders.setting import embedder_from_setting

                embedder = embedder_from_setting(embedder)
            options["embedder"] = embedder
            made = LongTermMemory(self.engine, scope, **options)
            with self._lock:
                self._long_terms.add(made)  # close() finishes its vectors
            return made
        with self._lock:
            kept = self._scopes.get(scope)
            if kept is not None:
                self._scopes.move_to_end(scope)
                return kept
        made = LongTermMemory(self.engine, scope, embedder=self.embedder)
        with self._lock:
            kept = self._scopes.setdefault(scope, made)
            self._long_terms.add(kept)
            self._scopes.move_to_end(scope)
            while len(self._scopes) > SCOPES_KEPT:
                self._scopes.popitem(last=False)  # its worker finishes its queue on its own
        return kept

    def working(self, namespace: str, **options: Any) -> WorkingMemory:
        """Working memory bound to ``namespace`` (e.g. ``session/abc``)."""
        from ..tiers.working import WorkingMemory

        return WorkingMemory(self.engine, namespace, **options)

    def shared(self, name: str, **options: Any) -> SharedMemory:
        """The reactive shared memory called ``name``, seen by every process on this engine."""
        from ..tiers.shared import SharedMemory

        memory = SharedMemory(self.engine, name, **options)
        self._closables.append(memory)
        return memory

    # -- closing -----------------------------------------------------------------------------
    def close(self) -> None:
        """Stop background work of the tiers and close the engine; idempotent.

        Queued vector computations are finished for up to :data:`CLOSE_WAIT` seconds; what is left
        is handed over (those entries wait for a vector, which any process with an embedder fills
        in: ``memstack serve``, another ``memstack.open``). No background thread outlives the call.
        """
        with self._lock:
            closables, self._closables = self._closables, []
            follower, self._follower = self._follower, None
            long_terms = list(self._long_terms)
            self._long_terms = weakref.WeakSet()
        try:
            if follower is not None:
                follower.close()
            deadline = time.monotonic() + CLOSE_WAIT
            for scope in long_terms:
                scope.close(max(0.0, deadline - time.monotonic()))
            for item in reversed(closables):
                item.close()
            from ..tiers.longterm.snapshotter import flush_all

            flush_all(self.engine)  # a bulk import that exits at once still leaves its snapshot
        finally:
            try:
                self.engine.close()
            finally:
                if self._root is not None:
                    self._root.close()

    def __repr__(self) -> str:
        tenant = self.tenant
        return f"<{type(self).__name__} {self.engine.url!r}" + (f" tenant={tenant!r}>" if tenant else ">")


def _embedder_of(setting: object) -> Embedder | None:
    """The embedder ``setting`` names: itself, the one a setting text names, or None."""
    if setting is None:
        return None
    from ..search.embedders import Embedder
    from ..search.embedders.setting import embedder_from_setting

    if isinstance(setting, str):
        return embedder_from_setting(setting)
    if isinstance(setting, Embedder):
        return setting
    raise InvalidConfiguration(f"embedder {short_repr(setting)}: must be an Embedder, a setting text or None")
