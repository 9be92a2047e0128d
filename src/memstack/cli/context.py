"""``memstack context``: print the messages a turn would get (the per-turn context builder).

A preview by default: recalled memories are not marked injected unless ``--mark-injected``.
Works on tenant ``--tenant``'s data.
"""

from __future__ import annotations

import typer

from ..context import ContextBuilder
from ..wire import context_json
from ._common import emit, state, tenant_memory

__all__ = ["context"]


def context(
    message: str = typer.Argument(..., help="The user's message for this turn."),
    session: str = typer.Option(..., "--session", "-s", help="The session id."),
    scope: str = typer.Option("default", "--scope", help="The long-term scope recalled from."),
    namespace: str = typer.Option(None, "--namespace", help="Working-memory namespace (default session/ID)."),
    system: str = typer.Option(None, "--system", help="A system prompt to put first."),
    history_turns: int = typer.Option(20, "--history-turns", min=1),
    recall_limit: int = typer.Option(8, "--recall-limit", min=0),
    budget: int = typer.Option(None, "--budget", min=1, help="Token budget (see memstack.context.budget)."),
    explain: bool = typer.Option(False, "--explain", help="Also say why each item is in or out."),
    mark_injected: bool = typer.Option(
        False, "--mark-injected", help="Record the recalled memories as injected (as a real turn does)."
    ),
) -> None:
    """Print the messages the context builder gives this turn (JSON under --json)."""
    with tenant_memory() as mem:
        builder = ContextBuilder(
            mem,
            scope=scope,
            history_turns=history_turns,
            recall_limit=recall_limit,
            token_budget=budget,
            system_prompt=system,
        )
        built = builder.build(session, message, namespace=namespace, dry_run=not mark_injected)
        if state.as_json:
            emit(context_json(built))
            return
        # Plain echo, not rich: the exact text matters and must not be re-wrapped.
        for message_ in built.messages:
            typer.echo(f"[{message_['role']}]")
            typer.echo(message_["content"])
            typer.echo()
        if explain:
            typer.echo(built.explain_text())
