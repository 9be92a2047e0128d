"""Top-level service commands: ``serve``, ``export``, ``import`` (``doctor`` is in :mod:`.doctor`)."""

from __future__ import annotations

import inspect
import logging
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.progress import Progress

from ...engines.prefixed import tenant_engine
from ...foundation.errors import InvalidConfiguration
from ...foundation.redact import RedactingFormatter, redact, redact_url
from ...services.lifecycle.retention import Retention, parse_retention
from ...services.memory import Memory
from ...services.transfer.dump import export_jsonl, import_jsonl
from ..server.defaults import LIMITS, Limit
from ._common import EXIT, EmbedderOption, console, emit, err_console, memory, state

if TYPE_CHECKING:  # the server extra is optional: imported only when serving
    from ...engines import Engine
    from ...search.embedders import Embedder
    from ...services.dream.scheduler import DreamScheduler
    from ..server.auth import AuthMode
    from ..server.throttle import AuthThrottle

__all__ = ["export", "import_", "serve"]


def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8765, help="TCP port."),
    stdio: bool = typer.Option(False, "--stdio", help="Run only the MCP server over stdin/stdout."),
    auth: str = typer.Option(
        None,
        "--auth",
        help="'keys': every request needs an API key. Default: keys when any key exists or the host "
        "is not loopback, else none.",
    ),
    no_auth: bool = typer.Option(False, "--no-auth", help="No API keys (tenant 'default'); loopback only."),
    log_level: str = typer.Option("info", help="debug, info, warning or error."),
    dream_interval: float = typer.Option(
        0.0, "--dream-interval", help="Seconds between dream passes per scope (default tenant); 0: off."
    ),
    dream_passes: str = typer.Option(
        None,
        "--dream-passes",
        help="The scheduled passes, comma-separated: consolidate, preferences, dedupe, extract "
        "(default: consolidate with a chat model, else dedupe).",
    ),
    embedder: EmbedderOption = None,
    retention: str = typer.Option(
        None,
        "--retention",
        help="Retention policies, e.g. long_term_max_age=90d,turn_log_max_age=7d (default: "
        "$MEMSTACK_RETENTION; unset: keep everything).",
    ),
    forwarded_allow_ips: str = typer.Option(
        None,
        "--forwarded-allow-ips",
        help="Comma-separated proxy addresses whose X-Forwarded-For/-Proto are believed (default: none, "
        "not even loopback).",
    ),
    **limits: Any,
) -> None:
    """Serve the HTTP API and the MCP server (streamable HTTP at /mcp) on one port.

    The auth mode is fixed at start: once in keys mode, revoking or losing every key never opens
    the API. The port is bound before the banner is printed. Every log line, the banner and every
    error go through the one redaction rule (no password, API key or model key is printed); the
    access log's id hashes are keyed by $MEMSTACK_LOG_KEY, else by a random key per process.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(name)s %(message)s"))
    logging.basicConfig(level=log_level.upper(), handlers=[handler])
    mode = _auth_mode(auth, no_auth)
    throttle = _throttle(limits.pop("auth_failure_burst"), limits.pop("auth_failure_rate"))
    connections = {name: limits.pop(name) for name in ("head_timeout", "body_timeout", "max_connections")}
    try:
        import uvicorn

        from ..server import ServerSettings, create_app
    except ImportError as exc:  # the server extra is optional
        _error(f"the server extra is not installed ({exc}); pip install 'memstack[server]'")
        raise typer.Exit(1) from exc
    vectors = _embedder(embedder if embedder is not None else state.embedder)
    policies = _retention(retention)
    with memory() as mem:
        mem.embedder = vectors
        if stdio:
            _serve_stdio(mem)
            return
        with _refused_setting():
            # the limits left are ServerSettings' own keywords (each row's name)
            settings = ServerSettings(
                auth=mode, host=host, embedder=vectors, retention=policies, auth_throttle=throttle, **limits
            )
        with _refused_setting():
            app = create_app(mem.engine, settings)
        sock = _bind(host, port)
        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan="on",
            **_connection_options(connections, forwarded_allow_ips),
        )
        err_console.print(
            escape(_banner(mem, host, port, app.state.auth.mode, mode)), highlight=False, soft_wrap=True
        )
        scheduler = _dream_scheduler(mem, dream_interval, dream_passes)
        try:
            with sock:
                uvicorn.Server(config).run(sockets=[sock])
        finally:
            if scheduler is not None:
                scheduler.stop()


def _limit_option(limit: Limit[Any]) -> inspect.Parameter:
    """``serve``'s option for one row of the limits table: its flag, type, default and help. A limit
    read from an environment variable takes no default here: the part it configures reads the
    variable (naming it when bad), and the help says so."""
    if limit.env:
        text = f"{limit.help} Default: ${limit.env}, else {limit.default:g}."
        option, annotation = typer.Option(None, limit.option, help=text), limit.kind | None
    else:
        option = typer.Option(limit.default, limit.option, help=limit.help, min=limit.minimum)
        annotation = limit.kind
    return inspect.Parameter(
        limit.name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation
    )


def _with_limits(command: Callable[..., None], after: str) -> None:
    """Give ``command`` (its ``**limits``) an option for every row of :data:`LIMITS`, listed after its
    option ``after``: typer reads the options from the signature."""
    own = [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for p in inspect.signature(command, eval_str=True).parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    at = [p.name for p in own].index(after) + 1
    parameters = [*own[:at], *map(_limit_option, LIMITS), *own[at:]]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]


_with_limits(serve, after="retention")


def _banner(mem: Memory, host: str, port: int, mode: str, asked: str | None) -> str:
    """What ``serve`` prints once its port is bound: the engine (its URL redacted), the auth mode and
    tenant, and the addresses of the inspector, MCP and the API docs."""
    base = f"http://{_netloc(host, port)}"
    if mode == "keys":
        auth = "API keys (each request acts for its key's tenants)"
    elif asked == "none":
        auth = "none, tenant default (--no-auth: stays keyless)"
    else:
        auth = "none, tenant default (keyless on loopback; creating an API key turns keys on)"
    return (
        f"memstack serving {mem.engine.name} ({redact_url(mem.engine.url)}) on {base}\n"
        f"  auth: {auth}\n"
        f"  inspector: {base}/ui\n"
        f"  MCP: {base}/mcp (streamable HTTP; `memstack serve --stdio` for a desktop agent)\n"
        f"  API: {base}/v1 (docs at {base}/docs)"
    )


def _serve_stdio(mem: Memory) -> None:
    """MCP over stdin/stdout on tenant ``default``, with the vectors of every tenant followed as
    the HTTP server follows them."""
    from ...tiers.longterm.backfill import VectorFollower
    from ..server.mcp import run_stdio

    follower = None if mem.embedder is None else VectorFollower(mem.engine, mem.embedder, reembed_stale=True)
    if follower is not None:
        follower.start()
    try:
        run_stdio(mem)
    finally:
        if follower is not None:
            follower.close()


def _error(message: str) -> None:
    """One start-up error line on standard error: credentials redacted, no markup read from it."""
    err_console.print(f"[red]error[/red]: {escape(redact(message))}", highlight=False, soft_wrap=True)


@contextmanager
def _refused_setting() -> Iterator[None]:
    """A setting ``serve`` refuses (:class:`InvalidConfiguration`) stops the start: one error line,
    exit 2."""
    try:
        yield
    except InvalidConfiguration as exc:
        _error(str(exc))
        raise typer.Exit(EXIT["usage"]) from None


def _connection_options(connections: dict[str, Any], forwarded: str | None) -> dict[str, Any]:
    """uvicorn's keywords for the connection limits and trusted proxies (exit 2 when bad); the
    descriptor limit is raised to hold the connection cap and the engine's own sockets."""
    from ..server.connections import ConnectionLimits, uvicorn_options

    with _refused_setting():
        limits = ConnectionLimits(**connections)
    _room_for(limits.max_connections + 256)
    return uvicorn_options(limits, forwarded)


def _room_for(descriptors: int) -> None:
    try:
        import resource
    except ImportError:  # not on this platform: the system's limit stands
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = descriptors if hard == resource.RLIM_INFINITY else min(descriptors, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _throttle(burst: int | None, per_minute: float | None) -> AuthThrottle:
    """The failed-authentication throttle from the options and environment (exit 2 when bad)."""
    from ..server.throttle import AuthThrottle

    with _refused_setting():
        return AuthThrottle.from_env(burst, per_minute)


def _auth_mode(auth: str | None, no_auth: bool) -> AuthMode | None:
    if auth is not None and auth not in ("keys", "none"):
        _error(f"--auth {auth!r}: expected 'keys' (or use --no-auth)")
        raise typer.Exit(EXIT["usage"])
    if no_auth and auth == "keys":
        _error("--auth keys and --no-auth contradict each other")
        raise typer.Exit(EXIT["usage"])
    if no_auth or auth == "none":
        return "none"
    return "keys" if auth == "keys" else None


def _netloc(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``: a busy port fails here, before anything is announced."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        _error(f"cannot listen on {_netloc(host, port)}: {exc}")
        raise typer.Exit(EXIT["error"]) from None
    try:
        # Like uvicorn: reuse a port in TIME_WAIT, but a port another process listens on stays busy.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        _error(f"cannot listen on {_netloc(host, port)}: {exc.strerror or exc}")
        raise typer.Exit(EXIT["error"]) from None
    sock.set_inheritable(True)
    return sock


def _embedder(setting: str | None) -> Embedder | None:
    """The retrieval setting, resolved once at start; a bad one stops the start (exit 2)."""
    from ...search.embedders.setting import resolve_embedder

    with _refused_setting():
        return resolve_embedder(setting)


def _retention(setting: str | None) -> Retention:
    """The retention policies, read once at start; a bad one stops the start (exit 2)."""
    with _refused_setting():
        return parse_retention(setting)


def _dream_scheduler(mem: Memory, interval: float, passes: str | None = None) -> DreamScheduler | None:
    """The background dream passes of ``serve`` over the default tenant, started (None when off);
    a bad pass list or a model pass without a model stops the start (exit 2)."""
    if interval <= 0:
        return None
    from ...llm.chat import chat_model_from_env
    from ...services.dream.scheduler import DreamScheduler
    from ...services.memory import Memory as TenantMemory

    chosen = [p.strip() for p in passes.split(",") if p.strip()] if passes else None
    with _refused_setting():
        scheduler = DreamScheduler(
            TenantMemory(tenant_engine(mem.engine, "default")),
            interval,
            model=chat_model_from_env(),
            passes=chosen,
        )
    scheduler.start()
    return scheduler


TenantDataOption = Annotated[
    str | None,
    typer.Option(
        "--tenant", help="One tenant's data only, as the service stores it (default: the whole engine)."
    ),
]
"""``--tenant`` of ``export`` and ``import``: the data they read or write."""


def _data_of(mem: Memory, tenant: str | None) -> Engine:
    """The engine ``export`` and ``import`` work on: one tenant's view, else the whole engine."""
    return tenant_engine(mem.engine, tenant) if tenant else mem.engine


def export(
    path: Path = typer.Argument(..., help="JSON-lines file to write ('-' for stdout)."),
    tenant: TenantDataOption = None,
) -> None:
    """Export every key of the engine (or of one tenant) as JSON lines."""
    with memory() as mem:
        engine = _data_of(mem, tenant)
        if str(path) == "-":
            count = export_jsonl(engine, sys.stdout)
        else:
            with (
                path.open("w", encoding="utf-8") as out,
                Progress(console=err_console, transient=True) as bar,
            ):
                task = bar.add_task("exporting", total=None)
                count = export_jsonl(engine, out, progress=lambda: bar.advance(task))
    if str(path) != "-":
        emit({"exported": count, "path": str(path)}, f"exported {count} keys to {path}")


def import_(
    path: Path = typer.Argument(
        ..., exists=True, dir_okay=False, help="JSON-lines file from `memstack export`."
    ),
    tenant: TenantDataOption = None,
) -> None:
    """Import keys from a JSON-lines export (existing keys with the same name are replaced)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    with memory() as mem, Progress(console=err_console, transient=not state.as_json) as bar:
        engine = _data_of(mem, tenant)
        task = bar.add_task("importing", total=len(lines))
        count = import_jsonl(engine, lines, progress=lambda: bar.advance(task))
    emit({"imported": count, "path": str(path)}, f"imported {count} keys from {path}")
    _ = console
