"""Which working-memory namespaces hold live entries.

Writers register every namespace they write in the tier's registry sets (see :mod:`.store`), so
the listing reads the registry and then each namespace's entry metadata (never values): a
namespace whose entries all expired is not listed (and stays registered until the retention
sweep's ``prune``: a listing never writes).
"""

from __future__ import annotations

import json

from ...engines import Engine
from .keys import normalize_prefix
from .store import WorkingMemory

__all__ = ["list_namespaces"]

# Any valid namespace binds the reader; it only reads (the registry and other namespaces).
_READER = "cli/read-only"


def list_namespaces(engine: Engine, prefix: str = "") -> list[str]:
    """The namespaces under ``prefix`` (whole segments; ``""``: all) holding a live entry, sorted.

    Raises:
        InvalidKey: an ill-formed prefix.
        EngineUnavailable: the engine cannot be reached.

    >>> import memstack
    >>> with memstack.open("memory://") as mem:
    ...     _ = mem.working("session/s1").set("draft", "hello")
    ...     _ = mem.working("patrol/heartbeat").set("alerts", [])
    ...     list_namespaces(mem.engine)
    ['patrol/heartbeat', 'session/s1']
    """
    reader = WorkingMemory(engine, _READER)
    (registered,) = reader._namespaces_under([normalize_prefix(prefix)])
    now = engine.now_ms()
    live = []
    for namespace, metas, _ in reader._read_namespaces(registered, with_values=False):
        if any(json.loads(meta)["e"] > now for meta in metas.values()):
            live.append(namespace)
    return sorted(live)
