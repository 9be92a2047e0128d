"""Tenant purge: every key of one tenant and every API key that may act for it, with the same
:class:`~memstack.services.lifecycle.ForgetReport` as a forget.

API keys go first, so nothing can write for the tenant over HTTP while its data goes, with their
per-minute rate counters (``auth:rate:{key id}:{minute}``: keyed by key id, not by tenant, so only
the purge that revokes a key finds them; a rerun after a crash no longer knows the revoked ids,
and such counters expire on their own within two minutes). Then the tenant's keys
(``t:{tenant}:…``) page by page in bounded batches, counted per tier by their keyspace family,
and the engine's own records naming the tenant (change events, batch replies). Run again after a
crash, it finishes (the scan finds what is left).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from ...engines import Engine
from ...engines.bulk import delete_keys
from ...engines.prefixed import tenant_engine
from ...foundation.keyspace import family_named, family_of
from .report import ForgetReport

__all__ = ["ApiKeys", "purge_tenant"]


class _Key(Protocol):
    @property
    def key_id(self) -> str: ...

    @property
    def tenants(self) -> Sequence[str]: ...


class ApiKeys(Protocol):
    """The service's API key store (:class:`memstack.doors.server.keys.ApiKeyStore`, above this layer)."""

    def list(self) -> Iterable[_Key]: ...

    def revoke(self, key_id: str) -> bool: ...


def _tier(key: str) -> str:
    found = family_of(key)[1]
    return "other" if found is None else found[0].owner


def _rate_counters(engine: Engine, key_ids: Sequence[str]) -> list[str]:
    """The per-minute rate counters of these API keys (``auth:rate:{key id}:{minute}``)."""
    rates = family_named("auth.rate")
    return [c for key_id in key_ids for c in engine.scan(rates.prefix(engine.tag, key_id=key_id))]


def purge_tenant(engine: Engine, tenant: str, *, api_keys: ApiKeys | None = None) -> ForgetReport:
    """Remove every key of ``tenant`` on ``engine`` (the whole engine, not a tenant view) and every
    API key of ``api_keys`` listing it with its rate counters (counted under ``api_keys``);
    ``remaining`` counts what a scan still finds.

    Raises:
        InvalidInput: a tenant name outside ``[A-Za-z0-9_-]{1,64}``.
        EngineUnavailable: the engine went away (run again: the purge resumes).
    """
    view = tenant_engine(engine, tenant)  # checks the name
    revoked, gone = 0, []
    if api_keys is not None:
        gone = [k.key_id for k in api_keys.list() if tenant in k.tenants]
        revoked = sum(api_keys.revoke(key_id) for key_id in gone)
        revoked += delete_keys(engine, _rate_counters(engine, gone))
    tiers: dict[str, int] = {}
    # Page by page, each page deleted before the next is read (as a tenant view's flush): memory
    # stays one page whatever the tenant holds. Deleting behind the scan misses nothing on any
    # engine (tests/engines/test_scan_pages.py).
    for page in view.scan_pages(""):
        by_tier: dict[str, list[str]] = {}
        for key in sorted(page):
            by_tier.setdefault(_tier(key), []).append(view.prefix + key)
        for tier, mine in by_tier.items():
            tiers[tier] = tiers.get(tier, 0) + delete_keys(engine, mine)
    deleted = {"api_keys": revoked} | dict(sorted(tiers.items()))
    own = [where for where, text in engine.internal_items() if view.prefix in text]
    deleted["engine"] = engine.drop_internal(own) if own else 0
    engine.compact()
    remaining = sum(1 for _ in view.scan(""))
    remaining += sum(1 for _, text in engine.internal_items() if view.prefix in text)
    if api_keys is not None:
        remaining += sum(1 for k in api_keys.list() if tenant in k.tenants)
        remaining += len(_rate_counters(engine, gone))
    return ForgetReport({"tenant": tenant}, deleted, remaining)
