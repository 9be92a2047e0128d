"""API keys: bearer tokens bound to tenants, stored hashed in the engine.

A token looks like ``msk_<key id>_<secret>``. Only ``sha256(secret)`` is stored (the secret is 32
random bytes, so a fast hash is enough, as for any high-entropy token); the key id finds the record
in one read, and the comparison is constant-time. Records live under ``auth:keys``, outside every
tenant prefix, so no tenant can read them through the API. An ``admin`` key may also manage keys
over HTTP (``/v1/keys``). A key may carry a request rate (requests per minute, enforced across
every server on the engine by :mod:`memstack.doors.server.rates`).

A record that cannot be read (corrupt, or written by another version) verifies nothing: the store
fails closed. Engine errors propagate, so the server can answer 503 instead of guessing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass

from ...engines import Engine
from ...engines.prefixed import TENANT_RULE
from ...foundation.errors import InvalidInput
from ...foundation.keyspace import family_named, no_tag
from ...foundation.limits import check_text
from .rates import MAX_RATE

__all__ = ["ApiKey", "ApiKeyStore"]

_KEYS = family_named("auth.keys").key(no_tag)
_ID_RULE = re.compile(r"[0-9a-f]{12}")


@dataclass(frozen=True)
class ApiKey:
    """A stored key: its id, the tenants it may act for (first = default), a label, creation time,
    whether it may manage keys, and its request rate (requests per minute; None: no limit)."""

    key_id: str
    tenants: tuple[str, ...]
    label: str
    created_at: float
    admin: bool = False
    rate: int | None = None


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiKeyStore:
    """Create, verify, list and revoke API keys on an engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(
        self, tenants: list[str], label: str = "", *, admin: bool = False, rate: int | None = None
    ) -> tuple[ApiKey, str]:
        """A new key for ``tenants``; returns the record and the token (shown once, never stored).

        ``rate`` limits the key to that many requests per minute (None: no limit).

        Raises:
            InvalidInput: no tenant, a tenant name outside ``[A-Za-z0-9_-]{1,64}``, a label that
                is not valid Unicode or longer than 200 characters, or a rate that is not an int
                from 1 to 10**9.
        """
        if not tenants:
            raise InvalidInput("an API key needs at least one tenant")
        for tenant in tenants:
            if not isinstance(tenant, str) or TENANT_RULE.fullmatch(tenant) is None:
                raise InvalidInput(f"tenant {tenant!r}: must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'")
        check_text(label, "label")
        if len(label) > 200:
            raise InvalidInput(f"label: {len(label)} characters, at most 200")
        if rate is not None and (
            isinstance(rate, bool) or not isinstance(rate, int) or not 1 <= rate <= MAX_RATE
        ):
            raise InvalidInput(
                f"rate {rate!r}: must be a whole number of requests per minute from 1 to 10**9"
            )
        key_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        record = ApiKey(key_id, tuple(dict.fromkeys(tenants)), label, self.engine.clock.now(), admin, rate)
        payload = {
            "hash": _digest(secret),
            "tenants": list(record.tenants),
            "label": label,
            "created_at": record.created_at,
            "admin": admin,
            "rate": rate,
        }
        self.engine.hset(_KEYS, {key_id: json.dumps(payload)})
        return record, f"msk_{key_id}_{secret}"

    def verify(self, token: str) -> ApiKey | None:
        """The key a bearer token belongs to, or None (unknown, revoked, malformed).

        Raises:
            EngineUnavailable: the engine cannot be reached (the caller must not treat it as "no key").
        """
        parts = token.split("_", 2)
        if len(parts) != 3 or parts[0] != "msk" or _ID_RULE.fullmatch(parts[1]) is None or not parts[2]:
            return None
        raw = self.engine.hget(_KEYS, parts[1])
        found = _record(parts[1], raw) if raw is not None else None
        if found is None or not hmac.compare_digest(found[1], _digest(parts[2])):
            return None
        return found[0]

    def list(self) -> list[ApiKey]:
        """Every readable key (without secrets), oldest first.

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """
        found = (_record(key_id, raw) for key_id, raw in self.engine.hgetall(_KEYS).items())
        keys = [record for record, _ in filter(None, found)]
        return sorted(keys, key=lambda k: (k.created_at, k.key_id))

    def revoke(self, key_id: str) -> bool:
        """Delete a key; True if it existed (False for an id that cannot exist).

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """
        return _ID_RULE.fullmatch(key_id) is not None and self.engine.hdel(_KEYS, key_id) == 1

    def any(self) -> bool:
        """True when at least one key exists.

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """
        return self.engine.hlen(_KEYS) > 0


def _record(key_id: str, raw: str) -> tuple[ApiKey, str] | None:
    """The key and its stored hash, or None for a record that does not parse."""
    try:
        data = json.loads(raw)
        tenants = tuple(str(t) for t in data["tenants"])
        rate = data.get("rate")
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int) or rate < 1):
            return None  # a rate this version cannot enforce: fail closed
        record = ApiKey(
            key_id,
            tenants,
            str(data.get("label", "")),
            float(data["created_at"]),
            data.get("admin") is True,
            rate,
        )
        return (record, str(data["hash"])) if tenants else None
    except (ValueError, TypeError, KeyError):
        return None
