"""Import paths of modules that moved when the package was laid out by layers, kept working.

``import memstack.longterm`` (now :mod:`memstack.tiers.longterm`) still imports the module, with a
:class:`DeprecationWarning` that names the new path; the old name and the new one are the same
module object, so ``isinstance`` checks and monkeypatching agree. A submodule follows its package
(``memstack.longterm.entry`` is ``memstack.tiers.longterm.entry``). Only names listed in
:data:`MOVED` are answered; everything else is left to the import system.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Final

__all__ = ["MOVED", "MOVED_NAMES", "install", "moved_name", "new_name"]

MOVED: Final[dict[str, str]] = {
    "memstack.errors": "memstack.foundation.errors",
    "memstack.clock": "memstack.foundation.clock",
    "memstack.limits": "memstack.foundation.limits",
    "memstack.redact": "memstack.foundation.redact",
    "memstack.timefmt": "memstack.foundation.timefmt",
    "memstack.keyspace": "memstack.foundation.keyspace",
    "memstack.nodes": "memstack.compat.rocketride",
    "memstack.session": "memstack.tiers.session",
    "memstack.conversation": "memstack.tiers.conversation",
    "memstack.longterm": "memstack.tiers.longterm",
    "memstack.working": "memstack.tiers.working",
    "memstack.shared": "memstack.tiers.shared",
    "memstack.dream": "memstack.services.dream",
    "memstack.lifecycle": "memstack.services.lifecycle",
    "memstack.dump": "memstack.services.transfer.dump",
    "memstack.adopt": "memstack.services.transfer.adopt",
    "memstack.context": "memstack.agent.context",
    "memstack.tools": "memstack.agent.tools",
    "memstack.lgstore": "memstack.agent.lgstore",
    "memstack.wire": "memstack.ops.wire",
    "memstack.cli": "memstack.doors.cli",
    "memstack.server": "memstack.doors.server",
    "memstack.integrations": "memstack.doors.integrations",
}
"""Old module path -> where it lives now (a package's submodules follow it)."""

MOVED_NAMES: Final[dict[tuple[str, str], str]] = {
    # MemoryTools runs its calls through the operations registry, a layer above the agent tools.
    ("memstack.agent.tools", "MemoryTools"): "memstack.ops.memory_tools",
    ("memstack.agent.tools", "dispatch"): "memstack.ops.memory_tools",
}
"""(module, name) -> the module that now defines ``name``: names a module re-exported before
they moved to a higher layer, which it may not import."""


def moved_name(module: str, name: str) -> object:
    """``name`` where it lives now, with a :class:`DeprecationWarning` naming the new path (for a
    module's ``__getattr__``).

    Raises:
        AttributeError: ``name`` did not move out of ``module``.
    """
    target = MOVED_NAMES.get((module, name))
    if target is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(
        f"{module}.{name} moved to {target}.{name}; import it from there", DeprecationWarning, stacklevel=3
    )
    return getattr(importlib.import_module(target), name)


def new_name(fullname: str) -> str | None:
    """Where the module once imported as ``fullname`` lives now, or None when it did not move."""
    head = fullname
    while head:
        if head in MOVED:
            return MOVED[head] + fullname[len(head) :]
        head = head.rpartition(".")[0]
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def exec_module(self, module: ModuleType) -> None:
        warnings.warn(
            f"{module.__name__} moved to {self.target}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        # The import system returns what sys.modules holds under the name once this returns, so
        # the old name becomes the real module (tests/foundation/test_moved.py).
        sys.modules[module.__name__] = importlib.import_module(self.target)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        moved = new_name(fullname)
        if moved is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(moved))


_FINDER: Final = _Finder()


def install() -> None:
    """Answer the old paths (once per process; first, so a stale folder left by an old checkout
    cannot shadow them as a namespace package)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
