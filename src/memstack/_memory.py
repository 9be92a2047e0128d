"""``Memory``: one engine and every tier built on it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final

from .clock import Clock, SystemClock
from .engines import Engine, open_engine
from .forget.retention import Retention
from .redact import redact_url

if TYPE_CHECKING:
    from .conversation import ConversationStore, NodeMemory, SlidingWindows, TurnMemory
    from .dream import Dreamer
    from .forget import ForgetReport
    from .longterm import LongTermMemory
    from .search.embedders import Embedder
    from .session import SessionStore
    from .shared import SharedMemory
    from .working import WorkingMemory

__all__ = ["SCOPES_KEPT", "Memory", "open"]

SCOPES_KEPT: Final = 1024
"""Long-term scopes a :class:`Memory` keeps built (see :meth:`Memory.long_term`)."""


class Memory:
    """Every memory tier on one storage engine. A context manager; ``close()`` closes the engine.

    Tiers are created on first use and share the engine and the clock. Open one with
    :func:`memstack.open`.
    """

    def __init__(
        self, engine: Engine, *, embedder: Embedder | None = None, retention: Retention | None = None
    ) -> None:
        self.engine = engine
        self.embedder = embedder
        self.retention = retention if retention is not None else Retention()
        self._lock = threading.Lock()
        self._closables: list[Any] = []
        self._scopes: OrderedDict[str, LongTermMemory] = OrderedDict()

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
        """Long-term memories of one scope (a user or an agent), searched by BM25 (+ vectors).

        Without ``options`` the scope uses this memory's :attr:`embedder` and is kept (the last
        :data:`SCOPES_KEPT` scopes), so its background vector worker is shared by every caller.
        ``options`` go to :class:`~memstack.longterm.LongTermMemory` (``embedder`` defaults to
        :attr:`embedder`).

        Raises:
            InvalidKey: a bad scope.
            InvalidConfiguration: a bad option.
        """
        from .longterm import LongTermMemory

        if options:
            options.setdefault("embedder", self.embedder)
            return LongTermMemory(self.engine, scope, **options)
        with self._lock:
            kept = self._scopes.get(scope)
            if kept is not None:
                self._scopes.move_to_end(scope)
                return kept
        made = LongTermMemory(self.engine, scope, embedder=self.embedder)
        with self._lock:
            kept = self._scopes.setdefault(scope, made)
            self._scopes.move_to_end(scope)
            while len(self._scopes) > SCOPES_KEPT:
                self._scopes.popitem(last=False)  # its worker finishes its queue on its own
        return kept

    def dream(self, scope: str = "default", **options: Any) -> Dreamer:
        """The dream passes of one long-term scope (``options``: see :class:`memstack.dream.Dreamer`;
        ``embedder``/``profile`` go to the scope). The turn log is this memory's."""
        from .dream import Dreamer

        lt_options = {k: options.pop(k) for k in ("embedder", "profile", "fusion") if k in options}
        options.setdefault("turns", self.turns)
        if self.retention.archive_max_age is not None:  # the archive policy (memstack.forget.retention)
            options.setdefault("retention", self.retention.archive_max_age)
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

    # -- forgetting --------------------------------------------------------------------------
    def forget(
        self,
        *,
        subject: str | None = None,
        session: str | None = None,
        conversation: str | None = None,
        scope: str | None = None,
        namespace: str | None = None,
        board: str | None = None,
        vacuum: bool = False,
    ) -> ForgetReport:
        """Remove every trace of exactly one subject (the end user given as ``subject=`` on writes:
        everything about them in every tier), session, conversation, long-term scope,
        working-memory namespace (a segment-aware prefix) or shared board, and verify it (see
        :mod:`memstack.forget.run` for what each selector reaches).

        Returns a :class:`~memstack.forget.ForgetReport` whose ``remaining`` is 0 when nothing is
        left. Interrupted (a crash, the engine gone), it finishes when called again. The engine is
        compacted afterwards; ``vacuum=True`` also rebuilds a SQLite file, so not even unused page
        space keeps a copy (:meth:`memstack.engines.Engine.compact`; slow on large files).

        Raises:
            InvalidValue: none or several selectors.
            InvalidKey: a value that breaks its tier's id rule.
            Conflict: another forget is rewriting the turn log (call again).
            EngineUnavailable: the engine went away (call again).
        """
        from .forget.run import forget

        return forget(
            self,
            subject=subject,
            session=session,
            conversation=conversation,
            scope=scope,
            namespace=namespace,
            board=board,
            vacuum=vacuum,
        )

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Stop background work of the tiers and close the engine; idempotent."""
        with self._lock:
            closables, self._closables = self._closables, []
        try:
            for item in reversed(closables):
                item.close()
            from .longterm.snapshotter import flush_all

            flush_all(self.engine)  # a bulk import that exits at once still leaves its snapshot
        finally:
            self.engine.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Memory {redact_url(self.engine.url)!r}>"


def open(  # noqa: A001 - the library's entry point, like io.open
    url: str | None = None,
    *,
    clock: Clock | None = None,
    embedder: Embedder | str | None = None,
    retention: Retention | str | None = None,
) -> Memory:
    """Open a :class:`Memory` on the engine at ``url``.

    With no URL, ``$MEMSTACK_URL`` is used, else the embedded SQLite file in the user's data
    directory (``$MEMSTACK_HOME`` overrides it). ``embedder`` is the retrieval setting of every
    long-term scope opened through this memory: an :class:`~memstack.search.embedders.Embedder`,
    a setting text (``"local"``, ``"openai:URL#MODEL"``, ``"none"``, ``"auto"``; see
    :mod:`memstack.search.embedders.setting`), or None for BM25 alone (the library default: a
    model is loaded only when asked for). ``retention``: the tiers' retention policies, a
    :class:`~memstack.forget.retention.Retention` or its text form (``"long_term_max_age=90d"``);
    enforced by :func:`memstack.forget.retention.sweep` and the dream records' TTL.

    Raises:
        InvalidUrl: unknown scheme or malformed URL.
        EngineUnavailable: the engine cannot be reached.
        InvalidConfiguration: a bad embedder or retention setting.
    """
    if isinstance(embedder, str):
        from .search.embedders.setting import embedder_from_setting

        embedder = embedder_from_setting(embedder)
    if isinstance(retention, str):
        from .forget.retention import parse_retention

        retention = parse_retention(retention)
    return Memory(open_engine(url, clock=clock or SystemClock()), embedder=embedder, retention=retention)
