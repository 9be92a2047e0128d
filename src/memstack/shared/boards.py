"""Which shared boards exist: a scan of the tier's keys through the engine seam.

A board exists while it holds a key, a cached answer or a document (``shared:m:``, ``shared:c:``
and ``shared:d:`` keys embed its name, see :mod:`.storage`, :mod:`.cache`, :mod:`.documents`).
The scan reads key names only; its cost grows with the number of shared keys of the engine.
"""

from __future__ import annotations

from typing import Final

from ..engines import Engine

__all__ = ["list_boards"]

_PREFIX: Final = "shared:"
_FAMILIES: Final = ("m:", "c:", "d:")


def list_boards(engine: Engine) -> list[str]:
    """The names of the boards of ``engine`` that hold anything, sorted.

    Raises:
        EngineUnavailable: the engine cannot be reached.

    >>> import memstack
    >>> with memstack.open("memory://") as mem:
    ...     mem.shared("team")["plan"] = ["research"]
    ...     list_boards(mem.engine)
    ['team']
    """
    found = set()
    for key in engine.scan(_PREFIX):
        rest = key[len(_PREFIX) :]
        if not rest.startswith(_FAMILIES):
            continue
        rest = rest[2:]
        if engine.clustered and rest.startswith("{"):
            name = rest[1 : rest.find("}")] if "}" in rest else ""
        else:
            name = rest.split(":", 1)[0]
        if name:
            found.add(name)
    return sorted(found)
