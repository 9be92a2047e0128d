"""The ``memstack`` command line: one sub-command group per tier.

Each group lives in its own module exposing ``app`` (a :class:`typer.Typer`) and is listed in
:data:`GROUPS`; ``_common`` holds what every group shares (opening the engine, output), ``_errors``
the exit codes and the one-line error report, ``_values`` how values are read from the command line.
"""

from __future__ import annotations

import importlib

import typer

from ..engines.prefixed import TENANT_RULE
from ._errors import GuardedGroup
from ._state import DEFAULT_TENANT, state

__all__ = ["ENGINE_WIDE", "app", "main"]

# (command name, module under memstack.cli, help) — variation as data: add a tier by adding a row.
GROUPS: list[tuple[str, str, str]] = [
    ("sessions", "sessions", "Session state: sessions, keys, counters, history."),
    ("conversations", "conversations", "Conversations: active thread and token-limited history."),
    ("keys", "keys", "API keys of the HTTP service: create, list, revoke (whole engine)."),
    ("memories", "longterm", "Long-term memories: save, search, export, import."),
    ("working", "working", "Working memory: list, get, search, set, delete."),
    ("dream", "dream", "Dream passes: consolidation, preferences, dedupe; history, undo."),
    ("tenants", "tenants", "Whole tenants: purge one; adopt data stored without a tenant (whole engine)."),
]

# (module under memstack.cli, function name): top-level commands such as ``memstack serve``.
COMMANDS: list[tuple[str, str]] = [
    ("service", "serve"),
    ("service", "doctor"),
    ("service", "export"),
    ("service", "import_"),
    ("context", "context"),
    ("forget", "forget"),
]

ENGINE_WIDE: frozenset[str] = frozenset({"serve", "keys", "doctor", "export", "import", "tenants"})
"""Commands that work on the whole engine, not on one tenant's data: ``--tenant`` is refused."""

app = typer.Typer(
    name="memstack",
    help="memstack: memory for LLM agents and pipelines.",
    no_args_is_help=True,
    cls=GuardedGroup,
    rich_markup_mode=None,  # plain help: flags read `--json`, never `--json <bool>`
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    url: str = typer.Option(
        None, "--url", envvar="MEMSTACK_URL", help="Engine URL (default: embedded SQLite)."
    ),
    tenant: str = typer.Option(
        DEFAULT_TENANT,
        "--tenant",
        envvar="MEMSTACK_TENANT",
        help="Tenant whose data the tier commands use; 'default' is what the keyless server shows. "
        "serve, keys, doctor, export and import work on the whole engine.",
    ),
    create: bool = typer.Option(
        False, "--create", help="Create the directory of a --url SQLite file when it is missing."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable JSON output (errors too)."),
    embedder: str = typer.Option(
        None,
        "--embedder",
        help="Retrieval of the memories commands: local, minilm, e5-small, openai:BASE_URL[#MODEL] or "
        "none. Default: $MEMSTACK_EMBEDDER, else local when installed (hybrid), else none (BM25); "
        "the same rule as memstack.open and serve.",
    ),
) -> None:
    state.url, state.create, state.as_json = url or None, create, as_json
    state.embedder = embedder
    if TENANT_RULE.fullmatch(tenant) is None:
        raise typer.BadParameter(
            f"{tenant!r}: a tenant is 1-64 characters of A-Z, a-z, 0-9, '_' or '-'", param_hint="--tenant"
        )
    if ctx.invoked_subcommand in ENGINE_WIDE:
        source = ctx.get_parameter_source("tenant")
        if source is not None and source.name == "COMMANDLINE":
            command = ctx.invoked_subcommand
            hint = f"; use `{command} --tenant T`" if command in ("export", "import") else ""
            raise typer.BadParameter(
                f"{command!r} works on the whole engine, not on one tenant{hint}", param_hint="--tenant"
            )
        tenant = DEFAULT_TENANT  # MEMSTACK_TENANT set in the shell does not apply here
    state.tenant = tenant


for _name, _module, _help in GROUPS:
    _group = importlib.import_module(f"{__name__}.{_module}").app
    _group.rich_markup_mode = None  # one help style everywhere (groups built elsewhere too)
    app.add_typer(_group, name=_name, help=_help)
for _module, _function in COMMANDS:
    _fn = getattr(importlib.import_module(f"{__name__}.{_module}"), _function)
    app.command(name=_function.rstrip("_").replace("_", "-"))(_fn)


def main() -> None:
    """Entry point of the ``memstack`` script."""
    app()
