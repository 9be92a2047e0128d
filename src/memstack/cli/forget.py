"""``memstack forget``: remove every trace of one subject (end user), session, conversation, long-term scope,
working-memory namespace or shared board of tenant ``--tenant``, and print the deletion report."""

from __future__ import annotations

import typer

from ..lifecycle.report import TIERS
from ._common import emit, tenant_memory

__all__ = ["forget"]


def forget(
    subject: str = typer.Option(None, "--subject", help="An end user: everything written about them."),
    session: str = typer.Option(None, "--session", help="A session: state, turns, windows, working memory."),
    conversation: str = typer.Option(None, "--conversation", help="A conversation and its messages."),
    scope: str = typer.Option(None, "--scope", help="A long-term scope: entries, vectors, dream records."),
    namespace: str = typer.Option(None, "--namespace", help="Working memory under a path (whole segments)."),
    board: str = typer.Option(None, "--board", help="A shared board with its cache and documents."),
    vacuum: bool = typer.Option(False, "--vacuum", help="SQLite: also rebuild the file (no stale copies)."),
) -> None:
    """Forget exactly one thing, verify nothing is left, print the report (JSON under --json).

    Exits 1 when the verification scan still finds something (run it again to finish)."""
    with tenant_memory() as mem:
        report = mem.forget(
            subject=subject,
            session=session,
            conversation=conversation,
            scope=scope,
            namespace=namespace,
            board=board,
            vacuum=vacuum,
        )
    data = report.to_dict()
    ((kind, value),) = data["selector"].items()
    lines = [f"forgot {kind} {value}: {data['total']} removed, {data['remaining']} remaining"]
    lines += [f"  {tier}: {data['deleted'][tier]}" for tier in TIERS if data["deleted"][tier]]
    emit(data, "\n".join(lines))
    if report.remaining:
        raise typer.Exit(1)
