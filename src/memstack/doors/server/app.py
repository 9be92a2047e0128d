"""The FastAPI application: auth, tenant isolation, limits, access logs, and the tier routers.

Every request resolves to one tenant's :class:`~memstack.Memory`, built on a
:class:`~memstack.engines.prefixed.PrefixedEngine` view, so a tenant's reads and writes are
confined to its own keys in the storage layer itself.
"""

from __future__ import annotations

import importlib
import threading
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException
from starlette.routing import Route

from ... import __version__
from ...engines import Engine
from ...engines.prefixed import PrefixedEngine, tenant_engine
from ...foundation.errors import InvalidConfiguration
from ...search.embedders import Embedder, start_loading
from ...services.lifecycle.retention import Retention
from ...services.lifecycle.sweeper import RetentionSweeper
from ...services.memory import Memory
from ...tiers.longterm.backfill import VectorFollower
from . import defaults, docs_assets, health, metrics, problems, ui
from .access_log import AccessLog
from .auth import DEFAULT_TENANT, Authenticator, AuthMode, decide_mode
from .keys import ApiKey, ApiKeyStore
from .middleware import Receive, Scope, Send, limits_and_logs
from .slow_work import SlowWork
from .throttle import AuthThrottle, FailureThrottle
from .vacuum_gate import VacuumGate
from .watch_hub import WatchHub

__all__ = [
    "DEFAULT_TENANT",
    "ROUTERS",
    "AdminKey",
    "ServerSettings",
    "TenantMemory",
    "create_app",
    "tenant_memory",
]

# The routers under memstack.doors.server.routes: every operation's routes, generated from the registry
# (memstack.ops, the tool door's among them), then the server's own information.
ROUTERS: list[str] = ["ops"]
ROUTERS.append("info")  # the version, the engine and the retrieval setting in force
ROUTERS.append("watch")  # a board's events: a stream, so no operation of the registry


class ServerSettings:
    """Limits and auth mode of one server.

    Attributes:
        max_body_bytes, retention_interval, model_threads, model_runs_per_tenant, watch_per_key,
            watch_per_tenant, watch_idle_seconds: the server's limits, each one's default and meaning
            in its row of :mod:`memstack.doors.server.defaults` (the model-backed operations'
            threads and shares are :mod:`memstack.doors.server.slow_work`'s, the event streams'
            caps :mod:`memstack.doors.server.watch_hub`'s).
        max_wait_seconds: longest long-poll wait a request may hold (a longer ``wait`` is cut).
        auth: ``"keys"`` or ``"none"`` to force the mode; None decides at start (see
            :func:`memstack.doors.server.auth.decide_mode`). ``require_auth=True/False`` is the same as
            ``auth="keys"/"none"``.
        host: the interface the server listens on (``none`` is refused off loopback).
        embedder: the retrieval setting of every tenant's long-term scopes, the MCP tools and the
            context builder (None: BM25 alone); ``memstack serve --embedder`` resolves it with
            :func:`memstack.search.embedders.setting.resolve_embedder`. With one, a
            :class:`~memstack.tiers.longterm.backfill.VectorFollower` gives a vector to every entry of
            every tenant that lacks one (stored before, or written by a process without an
            embedder), from start-up on.
        retention: the tiers' retention policies (:mod:`memstack.services.lifecycle.retention`): every
            tenant is swept every ``retention_interval`` seconds (the sweep also deletes the
            long-term entries past their own ``expires_at``).
        auth_throttle: failed authentications allowed per client address in keys mode
            (:mod:`memstack.doors.server.throttle`); None: the environment variables, else the
            defaults, of the ``auth_failure_*`` rows of :mod:`memstack.doors.server.defaults`.
        log_key: the key of the access log's id hashes (:mod:`memstack.doors.server.access_log`);
            None: ``$MEMSTACK_LOG_KEY``, else a random key per process.
    """

    def __init__(
        self,
        *,
        max_body_bytes: int = defaults.MAX_BODY_BYTES.default,
        auth: AuthMode | None = None,
        require_auth: bool | None = None,
        max_wait_seconds: float = 30.0,
        host: str = "127.0.0.1",
        embedder: Embedder | None = None,
        retention: Retention | None = None,
        retention_interval: float = defaults.RETENTION_INTERVAL.default,
        auth_throttle: AuthThrottle | None = None,
        log_key: str | None = None,
        model_threads: int = defaults.MODEL_THREADS.default,
        model_runs_per_tenant: int = defaults.MODEL_RUNS_PER_TENANT.default,
        watch_per_key: int = defaults.WATCH_PER_KEY.default,
        watch_per_tenant: int = defaults.WATCH_PER_TENANT.default,
        watch_idle_seconds: float = defaults.WATCH_IDLE_SECONDS.default,
    ) -> None:
        self.max_body_bytes = max_body_bytes
        if auth is None and require_auth is not None:
            auth = "keys" if require_auth else "none"
        self.auth: AuthMode | None = auth
        self.max_wait_seconds = max_wait_seconds
        self.host = host
        self.embedder = embedder
        self.retention = retention if retention is not None else Retention()
        self.retention_interval = retention_interval
        self.auth_throttle = auth_throttle
        self.log_key = log_key
        self.slow_work = SlowWork(model_threads, model_runs_per_tenant)
        self.watch_per_key, self.watch_per_tenant = watch_per_key, watch_per_tenant
        self.watch_idle_seconds = watch_idle_seconds
        WatchHub(watch_per_key, watch_per_tenant, watch_idle_seconds)  # refused here, at start


class _Tenants:
    """One Memory per tenant, created on first use, closed with the app."""

    def __init__(
        self, engine: Engine, embedder: Embedder | None = None, retention: Retention | None = None
    ) -> None:
        self.engine, self.embedder, self.retention = engine, embedder, retention
        self._memories: dict[str, Memory] = {}
        self._lock = threading.Lock()

    def get(self, tenant: str) -> Memory:
        with self._lock:
            memory = self._memories.get(tenant)
            if memory is None:
                memory = self._memories[tenant] = Memory(
                    tenant_engine(self.engine, tenant), embedder=self.embedder, retention=self.retention
                )
            return memory

    def close(self) -> None:
        with self._lock:
            memories, self._memories = list(self._memories.values()), {}
        for memory in memories:
            memory.close()


_bearer = HTTPBearer(auto_error=False, description="An API key created with `memstack keys create`.")


def resolve_tenant(state: Any, authorization: str | None, tenant_header: str | None) -> str:
    """The tenant a request acts for (shared by the HTTP API and the MCP endpoint).

    Raises:
        HTTPException: 401 without a valid key in keys mode, 503 when the key store cannot be
            read, 404 for a tenant the key may not use.
    """
    auth: Authenticator = state.auth
    return auth.tenant(authorization, tenant_header)


def tenant_memory(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    x_memstack_tenant: Annotated[
        str | None, Header(description="Tenant to act for (keys with several).")
    ] = None,
) -> Memory:
    """The caller's tenant :class:`Memory` (FastAPI dependency; see :func:`resolve_tenant`)."""
    state = request.app.state
    authorization = f"Bearer {credentials.credentials}" if credentials is not None else None
    tenant = resolve_tenant(state, authorization, x_memstack_tenant)
    request.state.tenant = tenant
    memory: Memory = state.tenants.get(tenant)
    return memory


TenantMemory = Annotated[Memory, Depends(tenant_memory)]


def admin_key(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> ApiKey:
    """The caller's key if it is an admin key (FastAPI dependency of the key-management routes).

    Raises:
        HTTPException: 401 without a valid key, 503 when the key store cannot be read, 403 for a
            valid key that is not an admin key.
    """
    auth: Authenticator = request.app.state.auth
    key = auth.key(f"Bearer {credentials.credentials}" if credentials is not None else None)
    if not key.admin:
        raise HTTPException(
            403, "this API key may not manage keys; use an admin key (memstack keys create --admin)"
        )
    return key


AdminKey = Annotated[ApiKey, Depends(admin_key)]


def create_app(
    engine: Engine, settings: ServerSettings | None = None, *, extra_routers: bool = True, mcp: bool = True
) -> FastAPI:
    """The memstack HTTP application on ``engine`` (the caller keeps ownership of the engine).

    The auth mode is decided here, once (:func:`memstack.doors.server.auth.decide_mode`). With ``mcp``
    (and the SDK installed) the MCP server answers at ``/mcp`` (streamable HTTP).

    Raises:
        InvalidConfiguration: no-auth mode asked for on a host that is not loopback, or ``engine``
            is a tenant's view (the server makes its tenants' views itself: give it the whole
            engine, e.g. ``memstack.open(url, tenant=None).engine``).
    """
    if isinstance(engine, PrefixedEngine):
        raise InvalidConfiguration(
            f"create_app needs the whole engine, not the view {engine.prefix!r} of it: "
            "open it with memstack.open(url, tenant=None)"
        )
    settings = settings or ServerSettings()
    keys = ApiKeyStore(engine)
    auth = Authenticator(
        keys, decide_mode(keys, settings.auth, settings.host), follow_keys=settings.auth is None
    )
    observed = metrics.Metrics()
    tenants = _Tenants(metrics.TimedEngine(engine, observed), settings.embedder, settings.retention)
    # Always: entries expire on their own expires_at, whatever the policies.
    sweeper = RetentionSweeper(engine, settings.retention, settings.retention_interval)
    backfill = (
        None if settings.embedder is None else VectorFollower(engine, settings.embedder, reembed_stale=True)
    )
    if settings.embedder is not None:
        start_loading(settings.embedder)  # the first request's search does not wait for the model

    mcp_endpoint = _McpEndpoint(tenants, settings.slow_work) if mcp and _mcp_available() else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        if backfill is not None:
            backfill.start()
        sweeper.start()
        try:
            if mcp_endpoint is None:
                yield
            else:
                async with mcp_endpoint.running():
                    yield
        finally:
            if backfill is not None:
                backfill.close()
            sweeper.stop(timeout=5)
            tenants.close()

    app = FastAPI(
        title="memstack",
        version=__version__,
        description="Memory for LLM agents and pipelines: sessions, conversations, long-term, working "
        "and shared memory, the per-turn context and the agent memory tools.",
        lifespan=lifespan,
        docs_url=None,  # served by docs_assets from local files (no CDN)
        redoc_url=None,
    )
    app.state.engine = engine
    app.state.keys = keys
    app.state.tenants = tenants
    app.state.auth = auth
    app.state.settings = settings
    app.state.backfill = backfill
    app.state.slow_work = settings.slow_work
    app.state.vacuum_gate = VacuumGate(auth, engine.clock)
    app.state.watch_hub = WatchHub(
        settings.watch_per_key, settings.watch_per_tenant, settings.watch_idle_seconds
    )
    problems.install(app)

    health.install(app, engine)
    docs_assets.install(app)
    ui.install(app)

    if extra_routers:
        # Key management exists only where keys do: in no-auth mode /v1/keys is a plain 404.
        for module in ROUTERS:
            loaded = importlib.import_module(f"{__package__}.routes.{module}")
            # Every tier route resolves the caller, even one that reads no tenant data (the tool
            # list): in keys mode nothing answers without a key. FastAPI runs it once per request.
            for router in getattr(loaded, "routers", None) or [loaded.router]:
                app.include_router(router, dependencies=[Depends(tenant_memory)])
        if auth.mode == "keys":  # key management exists only where keys do (else a plain 404)
            app.include_router(importlib.import_module(f"{__package__}.routes.keys").router)
            app.include_router(importlib.import_module(f"{__package__}.routes.admin").router)
    if mcp_endpoint is not None:
        app.router.routes.append(
            Route("/mcp", endpoint=mcp_endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False)
        )
    # Keyless mode has no keys to guess: no throttle there, unless it may turn to keys mode.
    limits = settings.auth_throttle or AuthThrottle.from_env()
    guessable = auth.mode == "keys" or settings.auth is None
    throttle = FailureThrottle(limits, engine.clock) if guessable else None
    app.state.throttle = throttle
    access = AccessLog(settings.log_key)
    app.add_middleware(
        limits_and_logs,
        max_body=settings.max_body_bytes,
        throttle=throttle,
        access=access,
        authenticator=auth,
    )
    metrics.install(app, observed)
    return app


def _mcp_available() -> bool:
    try:
        from . import mcp  # noqa: F401 - only probing that the optional SDK imports
    except ImportError:  # the MCP SDK is part of the optional server extra
        return False
    return True


class _McpEndpoint:
    """The ``/mcp`` ASGI endpoint: the tenant is resolved as for the HTTP API, then MCP answers.

    A session manager runs only once, so each run of the app's lifespan gets a fresh one.
    """

    def __init__(self, tenants: _Tenants, slow_work: SlowWork) -> None:
        from .mcp import build_server

        self.tenants, self.slow_work = tenants, slow_work
        self.server = build_server(self._resolve, self._runner)
        self.manager: Any = None

    @staticmethod
    def _tenant(ctx: Any) -> str:
        request = getattr(ctx, "request", None)
        tenant = request.scope.get("state", {}).get("memstack_tenant") if request is not None else None
        return str(tenant or DEFAULT_TENANT)

    def _resolve(self, ctx: Any) -> Memory:
        return self.tenants.get(self._tenant(ctx))

    def _runner(self, ctx: Any) -> Any:  # a Runner: model-calling tools on the model threads
        return self.slow_work.runner(self._tenant(ctx))

    @asynccontextmanager
    async def running(self) -> Any:
        from .mcp import http_session_manager

        manager = http_session_manager(self.server)
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        try:
            if self.manager is None:
                raise HTTPException(503, "the MCP server is not running")
            tenant = resolve_tenant(
                scope["app"].state, headers.get("authorization"), headers.get("x-memstack-tenant")
            )
        except HTTPException as exc:
            response = problems.http_problem(exc.status_code, str(exc.detail), dict(exc.headers or {}))
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["memstack_tenant"] = tenant
        await self.manager.handle_request(scope, receive, send)
