"""``memstack tenants``: whole-tenant operations on the engine (the HTTP service's tenants)."""

from __future__ import annotations

import typer

from ..forget.purge import purge_tenant
from ..forget.report import TIERS
from ._common import emit, memory

__all__ = ["purge"]


def purge(
    tenant: str = typer.Argument(..., help="The tenant whose every key and API key goes."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
) -> None:
    """Remove every key of TENANT and every API key that may act for it; print the report.

    Exits 1 when the verification scan still finds something (run it again to finish)."""
    if not yes:
        typer.confirm(f"Purge tenant {tenant!r}: every memory and API key of it, for good?", abort=True)
    with memory() as mem:
        report = purge_tenant(mem.engine, tenant)
    data = report.to_dict()
    lines = [f"purged tenant {tenant}: {data['total']} removed, {data['remaining']} remaining"]
    lines += [f"  {tier}: {data['deleted'][tier]}" for tier in TIERS if data["deleted"][tier]]
    emit(data, "\n".join(lines))
    if report.remaining:
        raise typer.Exit(1)
