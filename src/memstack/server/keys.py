"""API keys: bearer tokens bound to tenants, stored hashed in the engine.

A token looks like ``msk_<key id>_<secret>``. Only ``sha256(secret)`` is stored (the secret is 32
random bytes, so a fast hash is enough, as for any high-entropy token); the key id finds the record
in one read, and the comparison is constant-time. Records live under ``auth:keys``, outside every
tenant prefix, so no tenant can read them through the API.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass

from ..engines import Engine
from ..engines.prefixed import TENANT_RULE
from ..errors import InvalidInput

__all__ = ["ApiKey", "ApiKeyStore"]

_KEYS = "auth:keys"


@dataclass(frozen=True)
class ApiKey:
    """A stored key: its id, the tenants it may act for (first = default), a label, creation time."""

    key_id: str
    tenants: tuple[str, ...]
    label: str
    created_at: float


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiKeyStore:
    """Create, verify, list and revoke API keys on an engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(self, tenants: list[str], label: str = "") -> tuple[ApiKey, str]:
        """A new key for ``tenants``; returns the record and the token (shown once, never stored).

        Raises:
            InvalidInput: no tenant, or a tenant name outside ``[A-Za-z0-9_-]{1,64}``.
        """
        if not tenants:
            raise InvalidInput("an API key needs at least one tenant")
        for tenant in tenants:
            if TENANT_RULE.fullmatch(tenant) is None:
                raise InvalidInput(f"tenant {tenant!r}: must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'")
        key_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        record = ApiKey(key_id, tuple(dict.fromkeys(tenants)), label, self.engine.clock.now())
        payload = {"hash": _digest(secret), "tenants": list(record.tenants), "label": label}
        payload["created_at"] = record.created_at  # type: ignore[assignment]  # JSON record mixes types
        self.engine.hset(_KEYS, {key_id: json.dumps(payload)})
        return record, f"msk_{key_id}_{secret}"

    def verify(self, token: str) -> ApiKey | None:
        """The key a bearer token belongs to, or None (unknown, revoked, malformed)."""
        parts = token.split("_", 2)
        if len(parts) != 3 or parts[0] != "msk" or not parts[1] or not parts[2]:
            return None
        raw = self.engine.hget(_KEYS, parts[1])
        if raw is None:
            return None
        data = json.loads(raw)
        if not hmac.compare_digest(str(data["hash"]), _digest(parts[2])):
            return None
        return ApiKey(parts[1], tuple(data["tenants"]), str(data.get("label", "")), float(data["created_at"]))

    def list(self) -> list[ApiKey]:
        """Every key (without secrets), oldest first."""
        keys = []
        for key_id, raw in self.engine.hgetall(_KEYS).items():
            data = json.loads(raw)
            keys.append(
                ApiKey(key_id, tuple(data["tenants"]), str(data.get("label", "")), float(data["created_at"]))
            )
        return sorted(keys, key=lambda k: (k.created_at, k.key_id))

    def revoke(self, key_id: str) -> bool:
        """Delete a key; True if it existed."""
        return self.engine.hdel(_KEYS, key_id) == 1

    def any(self) -> bool:
        """True when at least one key exists (the server then requires auth)."""
        return self.engine.hlen(_KEYS) > 0
