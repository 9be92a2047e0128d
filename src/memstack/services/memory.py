"""``Memory``: every tier on one engine (:class:`~memstack.services.tiers.Tiers`) with the lifecycle
services on top of them: dream passes, forgetting, retention.

The services sit above the tiers and above the memory's construction (they work on the engine and
the tiers), and this class sits above the services: it adds them to the tiers by subclassing, so
nothing imports upward and nothing imports in a circle (tests/test_import_graph.py; the layer
order is written in the README's architecture section).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Unpack

from ..engines import Engine, open_engine
from ..engines.prefixed import DEFAULT_TENANT, check_tenant, tenant_engine
from ..foundation.clock import Clock, SystemClock
from .lifecycle.retention import Retention, parse_retention
from .tiers import CLOSE_WAIT, SCOPES_KEPT, TierOptions, Tiers

if TYPE_CHECKING:
    from ..search.embedders import Embedder
    from .dream import Dreamer
    from .lifecycle import ForgetReport
    from .lifecycle.selectors import Selector

__all__ = ["CLOSE_WAIT", "DEFAULT_TENANT", "SCOPES_KEPT", "Memory", "open"]


class Memory(Tiers):
    """Every memory tier on one storage engine, with dream passes, forget and retention. A context
    manager; ``close()`` closes the engine.

    Tiers are created on first use and share the engine and the clock. Open one with
    :func:`memstack.open`, which picks the tenant view and the embedder; built directly on an engine
    a memory uses that engine as it is and searches with BM25 alone unless given an ``embedder``.

    Args:
        engine: the engine (or a tenant's view of one) every tier uses.
        retention: the tiers' retention policies.
        options: ``embedder``, ``root``, ``follow``, as :class:`~memstack.services.tiers.Tiers` takes them.
    """

    def __init__(
        self, engine: Engine, *, retention: Retention | None = None, **options: Unpack[TierOptions]
    ) -> None:
        super().__init__(engine, **options)
        self.retention = retention if retention is not None else Retention()

    def dream(self, scope: str = "default", **options: Any) -> Dreamer:
        """The dream passes of one long-term scope (``options``: see :class:`memstack.services.dream.Dreamer`;
        ``embedder``/``profile`` go to the scope). The turn log is this memory's; the archive keeps
        this memory's ``archive_max_age`` (:mod:`memstack.services.lifecycle.retention`)."""
        from .dream import Dreamer  # the passes pull in numpy and the search package: on first use

        lt_options = {k: options.pop(k) for k in ("embedder", "profile", "fusion") if k in options}
        options.setdefault("turns", self.turns)
        if self.retention.archive_max_age is not None:
            options.setdefault("retention", self.retention.archive_max_age)
        return Dreamer(self.long_term(scope, **lt_options), **options)

    def forget(
        self, *, vacuum: bool = False, audit: bool = False, **selector: Unpack[Selector]
    ) -> ForgetReport:
        """Remove every trace of exactly one subject (the end user given as ``subject=`` on writes:
        every version labelled with them, in every tier, and the sessions and conversations about
        them), session, conversation, long-term scope, working-memory namespace (a segment-aware
        prefix) or shared board, and verify it (see :mod:`memstack.services.lifecycle.forget`).

        Returns a :class:`~memstack.services.lifecycle.ForgetReport` whose ``remaining`` is 0 when nothing is
        left. Interrupted (a crash, the engine gone), it finishes when called again. The engine is
        compacted afterwards; ``vacuum=True`` also rebuilds a SQLite file, so not even unused page
        space keeps a copy (:meth:`memstack.engines.Engine.compact`; slow on large files).
        ``audit=True`` also reads the whole keyspace for any record still carrying the selector
        (every key, value and engine record of every tenant: slow on a big engine).

        Raises:
            InvalidValue: none or several selectors.
            InvalidKey: a value that breaks its selector's rule.
            Conflict: writers kept changing what is forgotten, or another forget is rewriting the
                turn log (call again).
            EngineUnavailable: the engine went away (call again).
        """
        from .lifecycle.forget import forget  # every tier's forget steps: loaded on first use

        return forget(self.engine, vacuum=vacuum, audit=audit, **selector)


def open(  # noqa: A001 - the library's entry point, like io.open
    url: str | None = None,
    *,
    tenant: str | None = DEFAULT_TENANT,
    clock: Clock | None = None,
    embedder: Embedder | str | None = None,
    retention: Retention | str | None = None,
) -> Memory:
    """Open a :class:`Memory` on the engine at ``url``.

    With no URL, ``$MEMSTACK_URL`` is used, else the embedded SQLite file in the user's data
    directory (``$MEMSTACK_HOME`` overrides it).

    ``tenant``: whose data the memory sees. The default, ``"default"``, is the data the CLI and the
    keyless ``memstack serve`` (HTTP, MCP, inspector) show; another name is that tenant's data
    (what an API key for it sees); ``None`` is the raw, engine-wide keyspace: every tenant's keys
    under ``t:{tenant}:``, the API keys, and data written without a tenant, such as the RocketRide
    pipeline node's original layout (``rr:memory:{session_id}:…``, see :mod:`memstack.compat.rocketride`) or
    memories saved by memstack before tenants were the default (``memstack doctor`` counts them and
    ``memstack tenants adopt --into default`` moves them into a tenant).

    ``embedder``: the retrieval setting of every long-term scope opened through this memory, resolved
    as every door resolves it (:func:`memstack.search.embedders.setting.resolve_embedder`): an
    :class:`~memstack.search.embedders.Embedder` or a setting text (``"local"``,
    ``"openai:URL#MODEL"``, ``"none"`` for BM25 alone), else ``$MEMSTACK_EMBEDDER``, else the local
    model when the ``embeddings`` extra is installed, else BM25 alone. The model loads on its first
    use. With an embedder, the memory also fills in the vectors of entries any process wrote
    without one (:class:`~memstack.tiers.longterm.backfill.VectorFollower`), and :meth:`Memory.close`
    finishes its own pending vectors first.

    ``retention``: the tiers' retention policies, a :class:`~memstack.services.lifecycle.retention.Retention`
    or its text form (``"long_term_max_age=90d"``); enforced by
    :func:`memstack.services.lifecycle.retention.sweep` and the dream records' TTL.

    Raises:
        InvalidUrl: unknown scheme or malformed URL.
        InvalidInput: a tenant name outside ``[A-Za-z0-9_-]{1,64}``.
        EngineUnavailable: the engine cannot be reached.
        InvalidConfiguration: a bad embedder or retention setting.
    """
    if tenant is not None:
        check_tenant(tenant)  # before anything is opened
    from ..search.embedders.setting import resolve_embedder

    resolved = resolve_embedder(embedder)
    if isinstance(retention, str):
        retention = parse_retention(retention)
    engine = open_engine(url, clock=clock or SystemClock())
    view = engine if tenant is None else tenant_engine(engine, tenant)
    return Memory(
        view,
        embedder=resolved,
        retention=retention,
        root=None if view is engine else engine,
        follow=resolved is not None,
    )
