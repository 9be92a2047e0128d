"""``memstack keys``: API keys of the HTTP service (stored hashed in the engine)."""

from __future__ import annotations

from typing import Any

import typer

from ...ops.wire import api_key_json
from ..server.keys import ApiKeyStore
from ._common import emit, emit_table, memory, state

app = typer.Typer(no_args_is_help=True)


@app.command("create")
def create(
    tenant: list[str] = typer.Option(..., "--tenant", "-t", help="Tenant the key acts for (repeatable)."),
    label: str = typer.Option("", "--label", help="A note to tell keys apart."),
    admin: bool = typer.Option(False, "--admin", help="The key may also manage keys over HTTP (/v1/keys)."),
    rate: int = typer.Option(
        None,
        "--rate",
        help="Requests per minute the key may make, across every server on this engine (429 past "
        "it). Default: no limit.",
    ),
) -> None:
    """Create a key; the token is printed once and never stored."""
    with memory() as mem:
        record, token = ApiKeyStore(mem.engine).create(tenant, label, admin=admin, rate=rate)
    kind = "admin key" if admin else "key"
    limit = f", {rate} requests a minute" if rate is not None else ""
    emit(
        {
            "key_id": record.key_id,
            "tenants": list(record.tenants),
            "label": label,
            "admin": admin,
            "rate": rate,
            "token": token,
        },
        f"{kind} {record.key_id} for {', '.join(record.tenants)}{limit}\n{token}\n"
        "(shown once: store it now)\nA keyless server running on this engine requires API keys from now "
        "on (within a second, no "
        "restart); one started with --no-auth stays keyless.",
    )


@app.command("list")
def list_keys() -> None:
    """List keys (ids, tenants, labels; never secrets)."""
    with memory() as mem:
        keys = ApiKeyStore(mem.engine).list()
    rows: list[dict[str, Any]] = [dict(api_key_json(k)) for k in keys]
    if not state.as_json:  # a person reads the tenants as a list, not as JSON
        for row in rows:
            row["tenants"] = ", ".join(row["tenants"])
    emit_table(rows, ["key_id", "tenants", "label", "admin", "rate", "created_at"], title="API keys")


@app.command("revoke")
def revoke(key_id: str) -> None:
    """Revoke a key by id (a server in keys mode stays closed even when the last key goes)."""
    with memory() as mem:
        removed = ApiKeyStore(mem.engine).revoke(key_id)
    if not removed:
        emit({"revoked": False, "key_id": key_id}, f"no key {key_id!r}")
        raise typer.Exit(3)
    emit({"revoked": True, "key_id": key_id}, f"revoked {key_id}")
