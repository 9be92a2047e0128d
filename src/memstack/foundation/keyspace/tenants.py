"""Tenants: every key of a tenant's view of an engine starts with ``t:{tenant}:``.

The prefix is added by the storage layer (:mod:`memstack.engines.prefixed`), so tier code never
sees it; this module is the one place that spells it.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["DEFAULT_TENANT", "TENANT_PREFIX", "TENANT_RULE", "split_tenant", "tenant_prefix"]

TENANT_PREFIX: Final = "t:"
TENANT_RULE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A tenant name: 1-64 characters of ``[A-Za-z0-9_-]``."""
DEFAULT_TENANT: Final = "default"
"""The tenant ``memstack.open``, the CLI and the keyless server use unless told otherwise."""
_TENANT_KEY: Final = re.compile(r"t:([A-Za-z0-9_-]{1,64}):")


def tenant_prefix(tenant: str) -> str:
    """The prefix of every key of ``tenant`` (the name is not checked here)."""
    return f"{TENANT_PREFIX}{tenant}:"


def split_tenant(key: str) -> tuple[str | None, str]:
    """``(tenant, key inside the tenant)`` of an engine key; ``(None, key)`` outside every tenant."""
    found = _TENANT_KEY.match(key)
    if found is None:
        return None, key
    return found.group(1), key[found.end() :]
