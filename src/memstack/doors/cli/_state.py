"""The root options of one CLI run, read by every command (set by the root callback)."""

from __future__ import annotations

from dataclasses import dataclass

from ...foundation.keyspace import DEFAULT_TENANT

__all__ = ["DEFAULT_TENANT", "State", "state"]


@dataclass
class State:
    """``--url``, ``--tenant``, ``--embedder``, ``--create`` and ``--json`` of the current run."""

    url: str | None = None
    tenant: str = DEFAULT_TENANT
    create: bool = False
    as_json: bool = False
    embedder: str | None = None  # None: $MEMSTACK_EMBEDDER, else the local model when installed

    def reset(self, *, as_json: bool = False) -> None:
        """Back to the defaults: one process may run many commands (tests, embedding)."""
        self.url, self.tenant, self.create, self.as_json = None, DEFAULT_TENANT, False, as_json
        self.embedder = None


state = State()
