"""``memstack tenants``: whole-tenant operations on the engine (the HTTP service's tenants): purge
one, adopt data stored without a tenant into one."""

from __future__ import annotations

import typer

from ...services.lifecycle.purge import purge_tenant
from ...services.lifecycle.report import TIERS
from ...services.transfer.adopt import ADOPT_TIERS, adopt
from ..server.keys import ApiKeyStore
from ._common import counted, emit, memory

__all__ = ["adopt_command", "purge"]

_TIER_HELP = f"Only this tier (repeatable): {', '.join(ADOPT_TIERS)}. Default: all."


def purge(
    tenant: str = typer.Argument(..., help="The tenant whose every key and API key goes."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
) -> None:
    """Remove every key of TENANT and every API key that may act for it; print the report.

    Exits 1 when the verification scan still finds something (run it again to finish)."""
    if not yes:
        typer.confirm(f"Purge tenant {tenant!r}: every memory and API key of it, for good?", abort=True)
    with memory() as mem:
        report = purge_tenant(mem.engine, tenant, api_keys=ApiKeyStore(mem.engine))
    data = report.to_dict()
    lines = [f"purged tenant {tenant}: {data['total']} removed, {data['remaining']} remaining"]
    lines += [f"  {tier}: {data['deleted'][tier]}" for tier in TIERS if data["deleted"][tier]]
    emit(data, "\n".join(lines))
    if report.remaining:
        raise typer.Exit(1)


def adopt_command(
    into: str = typer.Option(..., "--into", help="The tenant that receives the data (e.g. default)."),
    tier: list[str] = typer.Option(None, "--tier", help=_TIER_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would move; write nothing."),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace tenant keys that hold other values (default: leave the family)."
    ),
) -> None:
    """Move data stored without a tenant (memstack.open before tenants were its default, tenant=None,
    the pipeline node's sessions) into tenant INTO, key family by key family, atomically.

    Families whose keys the tenant already holds with other values stay in place and are listed
    (exit 1) unless --overwrite. Running it again finishes an interrupted move. The pipeline node
    reads its sessions from the untenanted layout: leave them with --tier (all but sessions)."""
    with memory() as mem:
        report = adopt(mem.engine, into, tiers=tier or None, dry_run=dry_run, overwrite=overwrite)
    data = report.to_dict()
    verb = "would move" if dry_run else "moved"
    total = sum(data["moved"].values())
    families = counted(data["families"], "family", "families")
    lines = [f"{verb} {counted(total, 'key', 'keys')} in {families} into tenant {into}"]
    lines += [f"  {name}: {count}" for name, count in data["moved"].items()]
    if data["overwritten"]:
        replaced = counted(data["overwritten"], "tenant key", "tenant keys")
        lines.append(f"  {replaced} {'would be ' if dry_run else ''}replaced")
    if data["conflicts"]:
        lines.append(f"left in place (tenant {into} holds other values; --overwrite replaces them):")
        lines += [f"  {family}" for family in data["conflicts"]]
    if not dry_run:
        lines.append(f"untenanted keys left: {data['remaining']}")
    emit(data, "\n".join(lines))
    if data["conflicts"]:
        raise typer.Exit(1)
