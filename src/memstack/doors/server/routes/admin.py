"""``/v1/admin``: whole-tenant operations for admin keys (served in keys mode only, as ``/v1/keys``)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from ....ops.turn import Report
from ....services.lifecycle.purge import purge_tenant
from ..app import AdminKey
from ..keys import ApiKeyStore
from ._common import ERRORS

router = APIRouter(prefix="/v1/admin", tags=["admin"], responses=ERRORS)


@router.post(
    "/tenants/{tenant}/purge",
    response_model=Report,
    summary="Purge a tenant: every key and every API key of it; the deletion report",
)
def purge(request: Request, _admin: AdminKey, tenant: str) -> dict[str, object]:
    engine = request.app.state.engine
    return purge_tenant(engine, tenant, api_keys=ApiKeyStore(engine)).to_dict()
