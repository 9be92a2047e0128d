"""Tenant purge: every key of one tenant and every API key that may act for it, with the same
:class:`~memstack.forget.ForgetReport` as a forget.

API keys go first, so nothing can write for the tenant over HTTP while its data goes; then the
tenant's keys (``t:{tenant}:…``) in bounded batches, counted per tier by their prefix. Run again
after a crash, it finishes (the scan finds what is left).
"""

from __future__ import annotations

from typing import Final

from ..engines import Engine
from ..engines.prefixed import tenant_engine
from .report import ForgetReport
from .sweep import delete_keys

__all__ = ["TIER_OF_PREFIX", "purge_tenant"]

TIER_OF_PREFIX: Final = (
    ("lt:~inj:", "subject_index"),
    ("lt:", "long_term"),
    ("rr:memory:", "sessions"),
    ("conv:", "conversations"),
    ("win:", "conversations"),
    ("wm:", "working"),
    ("shared:c:", "semantic_cache"),
    ("shared:", "shared"),
    ("turns:", "turn_log"),
    ("dream:", "dream"),
)
"""A tenant key's tier by its prefix (first match wins); anything else counts as ``other``."""


def _tier(key: str) -> str:
    return next((tier for prefix, tier in TIER_OF_PREFIX if key.startswith(prefix)), "other")


def purge_tenant(engine: Engine, tenant: str) -> ForgetReport:
    """Remove every key of ``tenant`` on ``engine`` (the whole engine, not a tenant view) and every
    API key listing it; ``remaining`` counts what a scan still finds.

    Raises:
        InvalidInput: a tenant name outside ``[A-Za-z0-9_-]{1,64}``.
        EngineUnavailable: the engine went away (run again: the purge resumes).
    """
    from ..server.keys import ApiKeyStore  # the key store has no web dependency

    view = tenant_engine(engine, tenant)  # checks the name
    store = ApiKeyStore(engine)
    revoked = sum(store.revoke(k.key_id) for k in store.list() if tenant in k.tenants)
    deleted: dict[str, int] = {"api_keys": revoked}
    keys = sorted(view.scan(""))
    for tier in {_tier(k) for k in keys}:
        mine = [view.prefix + k for k in keys if _tier(k) == tier]
        deleted[tier] = deleted.get(tier, 0) + delete_keys(engine, mine)
    engine.compact()
    remaining = sum(1 for _ in view.scan("")) + sum(1 for k in store.list() if tenant in k.tenants)
    return ForgetReport({"tenant": tenant}, deleted, remaining)
